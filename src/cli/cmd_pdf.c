// cmd_pdf.c: `export LESSON --pdf FILE`: the handout (handout.c) printed to a PDF by WeasyPrint
// (Debian's package weasyprint), which lays HTML and CSS out for print without a browser.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "window.h"

// Runs `weasyprint -q HTML PDF`; false with a message naming what is missing or what failed.
static bool weasyprint(const char *html, const char *pdf, Err *e) {
    const pid_t pid = fork();
    if (pid < 0) return err_set(e, "--pdf: cannot start weasyprint: %s", strerror(errno));
    if (pid == 0) {
        execlp("weasyprint", "weasyprint", "-q", html, pdf, (char *)NULL);
        _exit(127);  // not installed
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return err_set(e, "--pdf: weasyprint: %s", strerror(errno));
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code == 127)
        return err_set(e, "--pdf needs WeasyPrint (apt-get install weasyprint); or write the page with --html DIR "
                          "and print it to PDF from a browser");
    if (code != 0) return err_set(e, "--pdf: weasyprint could not print %s (exit %d)", html, code);
    return true;
}

int export_pdf(ExportOptions *o, const char *pdf) {
    char scratch[] = "/tmp/stepformer-pdf-XXXXXX", html[600], part[4200];
    const bool own = o->html_dir == NULL;  // without --html, the page is written to a scratch folder
    if (own && !mkdtemp(scratch)) return fprintf(stderr, "stepformer: --pdf: no scratch folder: %s\n", strerror(errno)), 1;
    if (own) o->html_dir = scratch, o->scratch_page = true;
    int status = handout_run(o);
    snprintf(html, sizeof html, "%s/index.html", o->html_dir);
    snprintf(part, sizeof part, "%s.part", pdf);  // the PDF appears whole or not at all
    Err e = {{0}};
    if (status == 0 && !weasyprint(html, part, &e)) status = 1, fprintf(stderr, "stepformer: %s\n", e.msg);
    if (status == 0 && rename(part, pdf) != 0)
        status = 1, fprintf(stderr, "stepformer: %s: cannot write the PDF: %s\n", pdf, strerror(errno));
    if (status != 0) remove(part);
    else printf("wrote %s\n", pdf);
    if (own) remove(html), rmdir(scratch);
    return status;
}
