/* wearmon_report: what the parts of "wearmon report" share: the campaign
 * being reported, HTML helpers that escape everything from the database
 * (wearmon_report_html.c), and the sections written by
 * wearmon_report_data.c. Calls go report -> data -> html, never back. */
#ifndef WEARMON_REPORT_H
#define WEARMON_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "wearmon.h"

/* What the report is about. */
struct rep {
	struct wm *wm;
	FILE *f;
	int64_t tid;
	int64_t lo, hi; /* cycle numbers of the campaign */
	int64_t campaign, ncampaigns;
	struct wm_table tg;         /* the target row */
	struct wm_table it;         /* iterations of the campaign, with figures */
	struct wm_table cy;         /* cycles of the campaign, with figures */
	struct wm_table causes;     /* crash and collapse alerts' causes (QR_CAUSES) */
	struct wm_table device;     /* rows with the drive's own figures (QR_DEVICE) */
	struct wm_table hir;        /* host idle recovery per cycle and wait state */
	struct wm_table hir_pre;    /* its preconditions */
	struct wm_table hir_purge;  /* its purges */
	int64_t first_it, worst_it; /* iterations whose samples are shown */
};

/* Parameters of a query of the campaign: ?1 target, ?2..?3 its cycles. */
#define REP_SCOPE(r) (struct db_value[]){ WM_INT((r)->tid), WM_INT((r)->lo), WM_INT((r)->hi) }, 3

/* ---- HTML helpers (wearmon_report_html.c) ---- */

/* s HTML-escaped ("" for NULL). */
void rep_esc(struct rep *r, const char *s);

/* v with d decimals, a percentage of a ratio, bytes: "–" when unknown.
 * Each returns buf. */
char *rep_num(double v, int d, char *buf, size_t len);
char *rep_pct(double ratio, char *buf, size_t len);
char *rep_bytes(double v, char *buf, size_t len);

/* Table cells: a text column of row (left-aligned), a number, bytes, a time. */
void rep_td_text(struct rep *r, const struct wm_table *t, int row, const char *col);
void rep_td_num(struct rep *r, double v, int d);
void rep_td_bytes(struct rep *r, double v);
void rep_td_time(struct rep *r, const char *iso);

/* A table with an optional caption and "|"-separated column titles (a
 * leading '<' left-aligns one); rep_tend closes it. */
void rep_thead(struct rep *r, const char *caption, const char *cols);
void rep_tend(struct rep *r);

/* Opens a section with its id and title; a paragraph of plain text. */
void rep_section(struct rep *r, const char *id, const char *title);
void rep_para(struct rep *r, const char *text);

/* ---- sections (wearmon_report_data.c); each returns 0 or WM_EXIT_ERROR ---- */

int rep_write_steady(struct rep *r);
int rep_write_events(struct rep *r);
/* Reads the crash and collapse alerts' causes and the rows' device_*
 * figures into r->causes and r->device; rep_has_evidence: whether there
 * are any; rep_write_evidence writes them, nothing when the campaign has
 * neither (a plain loop device). */
int rep_load_evidence(struct rep *r);
int rep_has_evidence(const struct rep *r);
int rep_write_evidence(struct rep *r);
int rep_write_data(struct rep *r);

/* ---- the endurance forecast (wearmon_endurance.c) ---- */

/* The section: the forecast over the campaign's snapshots in words, the
 * wear indicator against time with the fit and its interval, the figures.
 * Returns 0 or WM_EXIT_ERROR. */
int rep_write_endurance(struct rep *r);

/* ---- host idle recovery (wearmon_hir.c) ---- */

/* Reads the campaign's bursts per wait state into r->hir, r->hir_pre and
 * r->hir_purge;
 * rep_has_hir: whether there are any; rep_write_hir writes the section
 * (nothing without them). Each returns 0 or WM_EXIT_ERROR. */
int rep_load_hir(struct rep *r);
int rep_has_hir(const struct rep *r);
int rep_write_hir(struct rep *r);

/* ---- the PTS tests (wearmon_pts.c) ---- */

/* The pages of the PTS tests the campaign ran (pts =), in the
 * specification's order: those before host idle recovery (iops,
 * throughput, latency, wsat), or with after_hir those after it (xsr,
 * dirth); nothing without such rows. Returns 0 or WM_EXIT_ERROR. */
int rep_write_pts(struct rep *r, int after_hir);

#endif
