/* cause: the cause of a fall in rate, from the dip and the window before. */
#include "cause.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"

const char *cause_name(enum cause_kind c)
{
	static const char *const names[] = {
		[CAUSE_THERMAL] = "thermal",
		[CAUSE_WEAR] = "wear",
		[CAUSE_HOST] = "host",
		[CAUSE_UNKNOWN] = "unknown",
	};
	return (unsigned)c < ARRAY_SIZE(names) ? names[c] : "?";
}

const char *cause_before_name(enum cause_before b)
{
	static const char *const names[] = {
		[CAUSE_BEFORE_NONE] = "none",
		[CAUSE_BEFORE_ITERATION] = "iteration",
		[CAUSE_BEFORE_BASELINE] = "baseline",
	};
	return (unsigned)b < ARRAY_SIZE(names) ? names[b] : "?";
}

/* Counter f from reading a to reading b: unknown (-1) unless both have it
 * and it did not go back. */
static int64_t grew(const struct db_dev_point *a, const struct db_dev_point *b,
		    enum db_series_field f)
{
	if (!a->has[f] || !b->has[f] || b->val[f] < a->val[f])
		return -1;
	return b->val[f] - a->val[f];
}

/* The figures between readings s[i0] and s[i1] (i0 < i1). */
static void between(const struct db_dev_point *s, size_t i0, size_t i1, struct cause_window *w)
{
	int64_t media = grew(&s[i0], &s[i1], DB_SERIES_MEDIA_BYTES);
	int64_t thr = grew(&s[i0], &s[i1], DB_SERIES_THROTTLE_MS);
	int64_t stall = grew(&s[i0], &s[i1], DB_SERIES_HOST_STALL_MS);

	w->known = 1;
	w->start_ms = s[i0].t_ms;
	w->end_ms = s[i1].t_ms;
	w->host_bytes = grew(&s[i0], &s[i1], DB_SERIES_HOST_BYTES);
	w->wa = w->host_bytes >= CAUSE_WA_MIN_BYTES && media >= 0
			? (double)media / (double)w->host_bytes
			: -1;
	w->has_throttle = thr >= 0;
	w->throttle_ms = thr >= 0 ? thr : 0;
	w->host_stall_ms = stall > 0 ? stall : 0;
	for (size_t i = i0; i <= i1; i++) {
		if (!s[i].has[DB_SERIES_TEMP_C])
			continue;
		if (!w->has_temp || s[i].val[DB_SERIES_TEMP_C] > w->peak_temp_c)
			w->peak_temp_c = s[i].val[DB_SERIES_TEMP_C];
		w->has_temp = 1;
	}
}

void cause_window(const struct db_dev_point *s, size_t n, enum db_phase ph, int64_t a_ms,
		  int64_t b_ms, struct cause_window *w)
{
	size_t lo = 0, hi;

	memset(w, 0, sizeof(*w));
	w->wa = -1;
	w->host_bytes = -1;
	while (lo < n && s[lo].phase != ph)
		lo++;
	for (hi = lo; hi < n && s[hi].phase == ph; hi++)
		;
	if (hi - lo < 2)
		return;
	size_t i0 = lo, i1 = hi - 1;
	for (size_t i = lo; i < hi && s[i].t_ms <= a_ms; i++)
		i0 = i;
	for (size_t i = hi; i-- > lo && s[i].t_ms >= b_ms;)
		i1 = i;
	if (i1 > i0)
		between(s, i0, i1, w);
}

/* Share of window w's length that v (ms) took; 0 for an unknown window. */
static double share(const struct cause_window *w, int64_t v)
{
	if (!w || !w->known || w->end_ms <= w->start_ms)
		return 0;
	return (double)v / (double)(w->end_ms - w->start_ms);
}

static int thermal(const struct cause_window *dip, const struct cause_window *before)
{
	int calm = !before || !before->known;

	if (dip->has_throttle) {
		double d = share(dip, dip->throttle_ms);
		double b = calm || !before->has_throttle ? 0 : share(before, before->throttle_ms);
		return d >= CAUSE_THROTTLE_SHARE && d - b >= CAUSE_THROTTLE_SHARE;
	}
	return dip->has_temp && !calm && before->has_temp &&
	       dip->peak_temp_c >= before->peak_temp_c + CAUSE_TEMP_RISE_C;
}

static int host(const struct cause_window *dip, const struct cause_window *before)
{
	double d = share(dip, dip->host_stall_ms);
	double b = before ? share(before, before->host_stall_ms) : 0;
	return d >= CAUSE_HOST_STALL_SHARE && d - b >= CAUSE_HOST_STALL_SHARE;
}

enum cause_kind cause_judge(const struct cause_window *dip, const struct cause_window *before)
{
	if (!dip || !dip->known)
		return CAUSE_UNKNOWN;
	if (thermal(dip, before))
		return CAUSE_THERMAL;
	if (dip->wa >= 0 && before && before->known && before->wa > 0 &&
	    dip->wa >= CAUSE_WEAR_WA_RATIO * before->wa)
		return CAUSE_WEAR;
	if (host(dip, before))
		return CAUSE_HOST;
	return CAUSE_UNKNOWN;
}

void cause_sample_span(const struct db_sample *s, int64_t *a_ms, int64_t *b_ms)
{
	int64_t len = s->seconds > 0 ? (int64_t)llround(s->seconds * 1000.0) : 0;
	*b_ms = s->t_ms;
	*a_ms = s->t_ms > len ? s->t_ms - len : 0;
}

int cause_dip_below(const struct db_sample *s, size_t n, double limit, int64_t *a_ms, int64_t *b_ms,
		    size_t *settled)
{
	long first = -1, last = -1;
	size_t measured = 0;
	int64_t x;

	*a_ms = 0;
	*b_ms = 0;
	*settled = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i].phase != DB_PHASE_MEASURE)
			continue;
		cause_sample_span(&s[i], &x, b_ms); /* the phase's end so far */
		if (s[i].mibps < limit && !(s[i].host_stall_ms > 0)) {
			if (first < 0) {
				first = (long)i;
				*settled = measured;
			}
			last = (long)i;
		}
		measured++;
	}
	if (first < 0)
		return -ENOENT;
	cause_sample_span(&s[first], a_ms, &x);
	cause_sample_span(&s[last], &x, b_ms);
	return 0;
}

/* ---- the evidence as text ---- */

static const char *const field_names[CAUSE_FIELDS] = {
	[CAUSE_F_DIP_START_S] = "DIP_START_S",
	[CAUSE_F_DIP_END_S] = "DIP_END_S",
	[CAUSE_F_DIP_DEVICE_WA] = "DIP_DEVICE_WA",
	[CAUSE_F_DIP_THROTTLE_MS] = "DIP_THROTTLE_MS",
	[CAUSE_F_DIP_PEAK_TEMP_C] = "DIP_PEAK_TEMP_C",
	[CAUSE_F_DIP_HOST_STALL_MS] = "DIP_HOST_STALL_MS",
	[CAUSE_F_BEFORE] = "BEFORE",
	[CAUSE_F_BEFORE_ITERATION_ID] = "BEFORE_ITERATION_ID",
	[CAUSE_F_BEFORE_START_S] = "BEFORE_START_S",
	[CAUSE_F_BEFORE_END_S] = "BEFORE_END_S",
	[CAUSE_F_BEFORE_DEVICE_WA] = "BEFORE_DEVICE_WA",
	[CAUSE_F_BEFORE_THROTTLE_MS] = "BEFORE_THROTTLE_MS",
	[CAUSE_F_BEFORE_PEAK_TEMP_C] = "BEFORE_PEAK_TEMP_C",
	[CAUSE_F_BEFORE_HOST_STALL_MS] = "BEFORE_HOST_STALL_MS",
	[CAUSE_F_THROTTLE_RESOLUTION_MS] = "THROTTLE_RESOLUTION_MS",
};

/* Every field an alert can carry fits one journal entry: the log's own,
 * the named context (CAUSE= among them) and these. */
_Static_assert(LOG_OWN_FIELDS + LOG_CONTEXT_FIELDS + CAUSE_FIELDS <= LOG_MAX_FIELDS,
	       "an alert's journal fields outnumber LOG_MAX_FIELDS");

const char *const *cause_field_names(size_t *n)
{
	*n = CAUSE_FIELDS;
	return field_names;
}

/* A figure with decimals, or "" when unknown. */
static void fig(char *buf, int known, double v, int decimals)
{
	if (known)
		snprintf(buf, 24, "%.*f", decimals, v);
	else
		buf[0] = '\0';
}

/* The fields of one window, from field first on (START_S, END_S,
 * DEVICE_WA, THROTTLE_MS, PEAK_TEMP_C, HOST_STALL_MS). */
static void window_vals(const struct cause_window *w, char (*v)[24])
{
	int k = w->known;
	fig(v[0], k && w->end_ms > 0, (double)w->start_ms / 1000.0, 3);
	fig(v[1], k && w->end_ms > 0, (double)w->end_ms / 1000.0, 3);
	fig(v[2], w->wa >= 0, w->wa, 4);
	fig(v[3], k && w->has_throttle, (double)w->throttle_ms, 0);
	fig(v[4], k && w->has_temp, (double)w->peak_temp_c, 0);
	fig(v[5], k && w->end_ms > 0, (double)w->host_stall_ms, 0);
}

/* A field's value as a JSON number, or null. */
static const char *num(const struct cause_texts *tx, enum cause_field f)
{
	return tx->vals[f][0] ? tx->vals[f] : "null";
}

static void json_of(const struct cause_evidence *ev, struct cause_texts *tx)
{
	const struct cause_window *d = &ev->dip, *b = &ev->before;
	char thr[24], stall[24], bthr[24], bstall[24];
	fig(thr, d->known && d->has_throttle, (double)d->throttle_ms / 1000.0, 3);
	fig(stall, 1, d->known ? (double)d->host_stall_ms / 1000.0 : 0, 3);
	fig(bthr, b->known && b->has_throttle, (double)b->throttle_ms / 1000.0, 3);
	fig(bstall, b->known && b->end_ms > 0, (double)b->host_stall_ms / 1000.0, 3);
	snprintf(tx->json, sizeof(tx->json),
		 "\"cause\":\"%s\",\"device_wa\":%s,\"baseline_device_wa\":%s,"
		 "\"throttle_seconds\":%s,\"peak_temp_c\":%s,\"host_stall_seconds\":%s,"
		 "\"before\":\"%s\",\"before_iteration_id\":%s,\"dip_start_s\":%s,"
		 "\"dip_end_s\":%s,\"before_start_s\":%s,\"before_end_s\":%s,"
		 "\"before_throttle_seconds\":%s,\"before_peak_temp_c\":%s,"
		 "\"before_host_stall_seconds\":%s,\"throttle_resolution_ms\":%s",
		 cause_name(ev->cause), num(tx, CAUSE_F_DIP_DEVICE_WA),
		 num(tx, CAUSE_F_BEFORE_DEVICE_WA), thr[0] ? thr : "null",
		 num(tx, CAUSE_F_DIP_PEAK_TEMP_C), stall, cause_before_name(ev->from),
		 num(tx, CAUSE_F_BEFORE_ITERATION_ID), num(tx, CAUSE_F_DIP_START_S),
		 num(tx, CAUSE_F_DIP_END_S), num(tx, CAUSE_F_BEFORE_START_S),
		 num(tx, CAUSE_F_BEFORE_END_S), bthr[0] ? bthr : "null",
		 num(tx, CAUSE_F_BEFORE_PEAK_TEMP_C), bstall[0] ? bstall : "null",
		 num(tx, CAUSE_F_THROTTLE_RESOLUTION_MS));
}

/* A field for the message: its value, or "unknown". */
static const char *word(const struct cause_texts *tx, enum cause_field f)
{
	return tx->vals[f][0] ? tx->vals[f] : "unknown";
}

static void words_of(const struct cause_evidence *ev, struct cause_texts *tx)
{
	static const char *const against[] = {
		[CAUSE_BEFORE_NONE] = "nothing before it",
		[CAUSE_BEFORE_ITERATION] = "the window before it",
		[CAUSE_BEFORE_BASELINE] = "the baseline iteration",
	};
	if (!ev->dip.known) {
		snprintf(tx->words, sizeof(tx->words),
			 "; likely cause: %s (the drive reported no counters during the dip)",
			 cause_name(ev->cause));
		return;
	}
	snprintf(tx->words, sizeof(tx->words),
		 "; likely cause: %s (from %s s to %s s of the measured phase against %s: "
		 "device WA %s against %s, throttled %s ms against %s ms, peak %s C against "
		 "%s C, host stalls %s ms against %s ms)",
		 cause_name(ev->cause), word(tx, CAUSE_F_DIP_START_S), word(tx, CAUSE_F_DIP_END_S),
		 against[ev->from], word(tx, CAUSE_F_DIP_DEVICE_WA),
		 word(tx, CAUSE_F_BEFORE_DEVICE_WA), word(tx, CAUSE_F_DIP_THROTTLE_MS),
		 word(tx, CAUSE_F_BEFORE_THROTTLE_MS), word(tx, CAUSE_F_DIP_PEAK_TEMP_C),
		 word(tx, CAUSE_F_BEFORE_PEAK_TEMP_C), word(tx, CAUSE_F_DIP_HOST_STALL_MS),
		 word(tx, CAUSE_F_BEFORE_HOST_STALL_MS));
}

void cause_texts(const struct cause_evidence *ev, struct cause_texts *tx)
{
	window_vals(&ev->dip, &tx->vals[CAUSE_F_DIP_START_S]);
	window_vals(&ev->before, &tx->vals[CAUSE_F_BEFORE_START_S]);
	snprintf(tx->vals[CAUSE_F_BEFORE], 24, "%s", cause_before_name(ev->from));
	fig(tx->vals[CAUSE_F_BEFORE_ITERATION_ID], ev->before_iteration_id > 0,
	    (double)ev->before_iteration_id, 0);
	fig(tx->vals[CAUSE_F_THROTTLE_RESOLUTION_MS], ev->throttle_res_ms > 0,
	    (double)ev->throttle_res_ms, 0);
	for (int f = 0; f < CAUSE_FIELDS; f++)
		tx->fields[f] = (struct log_field){ field_names[f], tx->vals[f] };
	json_of(ev, tx);
	words_of(ev, tx);
}
