// web_root.h: where the page's own files sit in the browser's in-memory file system. The site
// folder's lessons/, assets/models/ and fonts/ appear under it with the same names, so a path
// there is the site-relative URL it is fetched from (platform_web.c).
#ifndef STEPFORMER_WEB_ROOT_H
#define STEPFORMER_WEB_ROOT_H

#define WEB_ROOT "/stepformer"

#endif
