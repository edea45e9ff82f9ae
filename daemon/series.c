/* series: an iteration's readings of the drive as device_series rows. */
#include "series.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Counter f of reading b since reading a: unknown when either lacks it or
 * it went backwards (a reset drive). */
static void since(const struct devstat *a, const struct devstat *b, enum devstat_field f,
		  struct db_dev_point *p, enum db_series_field to)
{
	p->has[to] = a->f[f].has && b->f[f].has && b->f[f].v >= a->f[f].v;
	p->val[to] = p->has[to] ? b->f[f].v - a->f[f].v : 0;
}

/* The phase and time a reading taken at t falls in. */
static void place(const struct series_clock *c, uint64_t t, struct db_dev_point *p)
{
	uint64_t t0 = c->fill_t0;
	p->phase = DB_PHASE_FILL;
	if (c->measure_t0 && (t >= c->measure_t0 || !c->fill_t0)) {
		p->phase = DB_PHASE_MEASURE;
		t0 = c->measure_t0;
	}
	p->t_ms = t > t0 ? (int64_t)((t - t0) / 1000000u) : 0;
}

int series_build(const struct devpoll_reading *v, size_t n, const struct series_clock *c,
		 const struct hstall *st, size_t nst, struct db_dev_point **out, size_t *nout)
{
	struct db_dev_point *p = n ? calloc(n, sizeof(*p)) : NULL;
	size_t k = 0;

	*out = NULL;
	*nout = 0;
	if (n && !p)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct db_dev_point x;
		memset(&x, 0, sizeof(x));
		place(c, v[i].t_ns, &x);
		since(&v[0].d, &v[i].d, DEVSTAT_HOST_BYTES, &x, DB_SERIES_HOST_BYTES);
		since(&v[0].d, &v[i].d, DEVSTAT_MEDIA_BYTES, &x, DB_SERIES_MEDIA_BYTES);
		since(&v[0].d, &v[i].d, DEVSTAT_THROTTLE_MS, &x, DB_SERIES_THROTTLE_MS);
		x.has[DB_SERIES_TEMP_C] = v[i].d.f[DEVSTAT_TEMP_C].has;
		x.val[DB_SERIES_TEMP_C] = v[i].d.f[DEVSTAT_TEMP_C].v;
		x.has[DB_SERIES_HOST_STALL_MS] = 1;
		x.val[DB_SERIES_HOST_STALL_MS] =
			(int64_t)(hstall_within(st, nst, v[0].t_ns, v[i].t_ns, NULL) / 1000000u);
		if (k && p[k - 1].phase == x.phase && p[k - 1].t_ms >= x.t_ms)
			k--; /* the same millisecond: the later reading stays */
		p[k++] = x;
	}
	*out = p;
	*nout = k;
	return 0;
}
