/* CGtk: GTK 4 and libadwaita (pkg-config libadwaita-1) for the settings app.
 *
 * Only what Swift cannot import is spelled out here, as static inline functions: the
 * g_signal_connect macro, variadic calls (accessible labels), and the GObject casts.
 */
#ifndef INKLING_CGTK_SHIM_H
#define INKLING_CGTK_SHIM_H

#include <adwaita.h>
#include <gtk/gtk.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>

static inline gulong inkling_connect(gpointer instance, const gchar *signal, GCallback handler, gpointer data,
                                     GClosureNotify destroy) {
    return g_signal_connect_data(instance, signal, handler, data, destroy, (GConnectFlags)0);
}

/* The accessible name of a widget (AT-SPI), for controls whose visible label is elsewhere. */
static inline void inkling_set_accessible_label(GtkWidget *widget, const char *label) {
    gtk_accessible_update_property(GTK_ACCESSIBLE(widget), GTK_ACCESSIBLE_PROPERTY_LABEL, label, -1);
}

static inline void inkling_set_accessible_description(GtkWidget *widget, const char *text) {
    gtk_accessible_update_property(GTK_ACCESSIBLE(widget), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, text, -1);
}

/* Tell assistive technologies that `widget` is labelled by `label` (a visible GtkLabel). */
static inline void inkling_set_labelled_by(GtkWidget *widget, GtkWidget *label) {
    gtk_accessible_update_relation(GTK_ACCESSIBLE(widget), GTK_ACCESSIBLE_RELATION_LABELLED_BY, label, NULL, -1);
}

static inline guint inkling_invalid_list_position(void) { return GTK_INVALID_LIST_POSITION; }
#endif
