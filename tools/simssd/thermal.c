/* thermal: a first-order thermal model of the simulated drive (thermal.h). */
#include "thermal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define MIB 1048576.0

void thermal_init(struct thermal *t, const struct thermal_config *cfg, uint64_t now)
{
	memset(t, 0, sizeof(*t));
	t->cfg = *cfg;
	t->temp_c = cfg->ambient_c;
	t->t_ns = now;
	t->next_free = now;
}

/* The injected heat at t's time (thermal_spike): degrees to add. */
static double spike(const struct thermal *t)
{
	return t->t_ns < t->spike_until ? t->spike_c : 0;
}

/* Start or end throttling at the temperature now. */
static void update_throttle(struct thermal *t)
{
	double temp = t->temp_c + spike(t);
	if (t->cfg.throttle_c <= 0)
		t->throttled = 0;
	else if (temp >= t->cfg.throttle_c)
		t->throttled = 1;
	else if (temp < t->cfg.throttle_c - THERMAL_HYSTERESIS_C)
		t->throttled = 0;
}

/* How long of dt ns, idle from temp_c, the drive stays throttled: until
 * it has cooled to the end of the hysteresis (never when that is not
 * above ambient). An injected heat lasting all of dt lowers that end. */
static uint64_t throttled_for(const struct thermal *t, uint64_t dt)
{
	double end = t->cfg.throttle_c - THERMAL_HYSTERESIS_C - spike(t), amb = t->cfg.ambient_c;
	if (end <= amb)
		return dt;
	if (t->temp_c <= end)
		return 0;
	double cross = (double)t->cfg.tau_ns * log((t->temp_c - amb) / (end - amb));
	return cross < (double)dt ? (uint64_t)cross : dt;
}

void thermal_advance(struct thermal *t, uint64_t now)
{
	if (now <= t->t_ns)
		return;
	if (t->t_ns < t->spike_until && now > t->spike_until)
		thermal_advance(t, t->spike_until); /* the heat ends on the way */
	uint64_t dt = now - t->t_ns;
	if (t->throttled)
		t->throttle_ns += throttled_for(t, dt);
	double keep = exp(-(double)dt / (double)t->cfg.tau_ns);
	t->temp_c = t->cfg.ambient_c + (t->temp_c - t->cfg.ambient_c) * keep;
	t->t_ns = now;
	update_throttle(t);
}

uint64_t thermal_write(struct thermal *t, uint64_t len, uint64_t now)
{
	thermal_advance(t, now);
	/* written at r MiB/s for long, the heat in balances the loss,
	 * (temp - ambient) / tau, at temp = ambient + rise * r */
	t->temp_c += t->cfg.rise_c * ((double)len / MIB) / ((double)t->cfg.tau_ns / 1e9);
	int throttled = t->throttled;
	update_throttle(t);
	if (!throttled && !t->throttled)
		return now;
	uint64_t start = t->next_free > now ? t->next_free : now;
	t->next_free = start + (uint64_t)((double)len * 1e9 / (double)t->cfg.throttle_bps);
	return t->next_free;
}

void thermal_spike(struct thermal *t, double delta_c, uint64_t dur_ns, uint64_t now)
{
	thermal_advance(t, now);
	t->spike_c = delta_c;
	t->spike_until = now + dur_ns;
	update_throttle(t);
}

size_t thermal_format(const struct thermal *t, char *buf, size_t size)
{
	int n;
	if (size == 0)
		return 0;
	n = snprintf(buf, size,
		     "temperature_c %.1f\nthrottled %d\nthrottle_seconds %.3f\n"
		     "throttle_ms %llu\nthrottle_temp_c %.1f\n",
		     t->temp_c + spike(t), t->throttled, (double)t->throttle_ns / 1e9,
		     (unsigned long long)(t->throttle_ns / 1000000), t->cfg.throttle_c);
	if (n < 0)
		return 0;
	return (size_t)n < size ? (size_t)n : size - 1;
}
