// view_train.c: (being written)
#include "app.h"

void view_train(Ui *ui, const App *a, Rect r) {
    (void)a;
    ui_panel(ui, r, "Training");
}
