// views.h: the views. Each draws into r from the App it is given read-only (app.h), through the
// widgets, and records its clickable zones with a command (command.h); none changes the App or
// calls a feature. app/draw.c lays them out; app/app.c's table names them.
#ifndef STEPFORMER_VIEWS_H
#define STEPFORMER_VIEWS_H

#include "app.h"

// The centre's views, one a ViewKind (the table in app/app.c pairs them).
void view_stage(Ui *ui, const App *a, Rect r);
void view_attention(Ui *ui, const App *a, Rect r);
void view_decode(Ui *ui, const App *a, Rect r);
void view_pe(Ui *ui, const App *a, Rect r);
void view_train(Ui *ui, const App *a, Rect r);
void view_compare(Ui *ui, const App *a, Rect r);
void view_patch(Ui *ui, const App *a, Rect r);

// The frame around them.
void view_map(Ui *ui, const App *a, Rect r);
void view_timeline(Ui *ui, const App *a, Rect r);
void view_lesson(Ui *ui, const App *a, Rect r);
void view_top_bar(Ui *ui, const App *a, Rect r);
void view_help(Ui *ui, const App *a, Rect r);
void view_lessons(Ui *ui, const App *a, Rect r);  // the lesson list (L)

// Drawn over or instead of the centre.
void view_backward(Ui *ui, const App *a, Rect r);  // the Stage view in the backward pass
// The opening or closing card on screen, in r.
void view_card(Ui *ui, const App *a, Rect r);
void view_gradcheck(Ui *ui, const App *a, Rect r);  // G's table over the centre
// The Attention view in the backward pass, for the attention of stage k (one of its steps).
void view_attention_back(Ui *ui, const App *a, int k, Rect in);
// The question band over the foot of the centre (nothing when none waits).
void view_quiz(Ui *ui, const App *a, Rect center);

// For an attention stage whose query heads share fewer key/value heads (stage->kv_heads): "8
// query heads share 2 key/value heads (grouped-query attention): ..." (view_attention.c); ""
// when each query head has its own.
void attention_sharing(const Stage *st, char *s, size_t n);

#endif
