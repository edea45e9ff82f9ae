/* drive: scalegen's simulated NVMe drive (512 GiB) as the daemon sees it:
 * its counters, the evidence stored per row, health snapshots, the wear
 * rows and the trim between cycles, written through the daemon's calls
 * (common/db/db.h). Knows nothing of the campaign's schedule. */
#include <stdio.h>
#include <string.h>

#include "scalegen.h"

/* The drive's counters after an iteration wrote `written` bytes, and its
 * own evidence over the iteration as the daemon stores it from an NVMe
 * drive with the OCP log (iter.c device_evidence): host and media bytes,
 * the peak temperature, no throttling, no media errors, the spare left. */
void sg_drive_writes(struct gtarget *gt, uint64_t written, struct db_device_evidence *d)
{
	uint64_t media = (uint64_t)((double)written * (2.0 + gt->clock / 86400.0 / 365.0));
	int64_t peak = gt->temp_c + (int64_t)(3 * sg_rnd01(&gt->rng));

	gt->host_total += written;
	gt->host_since_erase += written;
	gt->nand_total += media;
	memset(d, 0, sizeof(*d));
	for (int f = 0; f < DB_DEV__COUNT; f++)
		d->has[f] = 1;
	d->val[DB_DEV_HOST_BYTES] = (int64_t)written;
	d->val[DB_DEV_MEDIA_BYTES] = (int64_t)media;
	d->val[DB_DEV_PEAK_TEMP_C] = peak;
	d->val[DB_DEV_SPARE_PCT] = 100 - (int64_t)(gt->nand_total / (CAPACITY * 300));
	d->wa = written ? (double)media / (double)written : -1;
}

/* The wear row of an iteration and the extents it leaves mapped (the
 * counters already moved by drive_writes). */
int sg_wear_after(struct gen *g, struct gtarget *gt, int64_t id, uint64_t size, uint64_t written)
{
	uint64_t ext[1][2] = { { 0, 0 } };
	char err[256];

	gt->mapped = size > gt->mapped ? size : gt->mapped;
	ext[0][1] = gt->mapped;
	struct db_wear_state s = { gt->id, (const uint64_t(*)[2])ext, 1, gt->host_total,
				   gt->host_since_erase };
	struct db_wear_row w = {
		.iteration_id = id,
		.capacity_bytes = CAPACITY,
		/* the region is the whole drive (no region_size): the sizes
		 * grow inside it, so none is left unused by configuration */
		.region_bytes = CAPACITY,
		.mapped_bytes = gt->mapped,
		.op_configured = 0,
		.op_effective = 1.0 - (double)gt->mapped / (double)CAPACITY,
		.host_bytes_written = written,
		.host_bytes_since_erase = gt->host_since_erase,
		.host_bytes_total = gt->host_total,
	};
	int ret = db_wear_store(g->db, &s, &w, 1, err, sizeof(err));
	if (ret)
		fprintf(stderr, "scalegen: %s\n", err);
	g->rows++;
	return ret;
}

/* A health snapshot as wear_health stores one from NVMe SMART. */
/* The snapshot's data as common/device/wear_health.c writes it for an
 * NVMe drive: identity, the SMART log, the bytes wearmond wrote. */
static void health_json(const struct gtarget *gt, const int64_t *v, char *buf, size_t len)
{
	snprintf(buf, len,
		 "{\"serial\":\"%s\",\"model\":\"%s\",\"firmware\":\"%s\",\"nvme\":{"
		 "\"critical_warning\":0,\"temperature_k\":%lld,\"available_spare\":%lld,"
		 "\"spare_threshold\":10,\"percentage_used\":%lld,\"data_units_read\":%lld,"
		 "\"data_units_written\":%lld,\"host_read_commands\":%lld,"
		 "\"host_write_commands\":%lld,\"power_on_hours\":%lld,\"unsafe_shutdowns\":0,"
		 "\"media_errors\":0,\"error_log_entries\":0},\"host_bytes_total\":%llu}",
		 gt->serial, MODEL, FIRMWARE, (long long)v[DB_H_TEMP] + 273,
		 (long long)v[DB_H_SPARE], (long long)v[DB_H_PCT_USED], (long long)v[DB_H_DU_READ],
		 (long long)v[DB_H_DU_WRITTEN], (long long)v[DB_H_SECTORS_READ] / 8,
		 (long long)(gt->host_total / FILL_BS), (long long)v[DB_H_POH],
		 (unsigned long long)gt->host_total);
}

int sg_health(struct gen *g, struct gtarget *gt, int64_t cycle_id, enum wear_point p)
{
	struct db_health h = { .target_id = gt->id, .cycle_id = cycle_id, .source = "nvme" };
	char err[256], data[1024];
	int64_t v[DB_H__COUNT] = {
		[DB_H_DU_READ] = 0,
		[DB_H_DU_WRITTEN] = (int64_t)(gt->host_total / 512000),
		[DB_H_PCT_USED] = (int64_t)(gt->nand_total / (CAPACITY * 30)),
		[DB_H_MEDIA_ERRORS] = 0,
		[DB_H_SPARE] = 100 - (int64_t)(gt->nand_total / (CAPACITY * 300)),
		[DB_H_TEMP] = gt->temp_c = 38 + (int64_t)(8 * sg_rnd01(&gt->rng)),
		[DB_H_CRIT] = 0,
		[DB_H_POH] = (int64_t)(gt->clock / 3600),
		[DB_H_NAND] = (int64_t)gt->nand_total,
		[DB_H_HOST] = (int64_t)gt->host_total,
		/* the block device's own count (sysfs stat), reads by the
		 * system's probes only */
		[DB_H_SECTORS_READ] = 1024 + (int64_t)(gt->clock / 60),
		[DB_H_SECTORS_WRITTEN] = (int64_t)(gt->host_total / 512),
	};

	for (int c = 0; c < DB_H__COUNT; c++) {
		h.has[c] = 1;
		h.val[c] = v[c];
	}
	h.host_bytes_delta = (int64_t)(gt->host_total - gt->last_host);
	h.nand_bytes_delta = (int64_t)(gt->nand_total - gt->last_nand);
	h.write_amplification = h.host_bytes_delta > 0
					? (double)h.nand_bytes_delta / (double)h.host_bytes_delta
					: -1;
	health_json(gt, v, data, sizeof(data));
	h.data = data;
	h.point = wear_point_name(p);
	h.mapped_bytes = gt->mapped;
	h.has_op_effective = 1;
	h.op_effective = 1.0 - (double)gt->mapped / (double)CAPACITY;
	gt->last_host = gt->host_total;
	gt->last_nand = gt->nand_total;
	g->rows++;
	int ret = db_health_insert(g->db, &h, err, sizeof(err));
	if (ret)
		fprintf(stderr, "scalegen: %s\n", err);
	return ret;
}

/* The between-cycles trim of the whole region: nothing mapped after it. */
int sg_trim_action(struct gen *g, struct gtarget *gt, struct retime *rt)
{
	struct db_action a = { .kind = ACT_TRIM, .outcome = ACT_OUT_OK };
	struct db_wear_state s = { gt->id, NULL, 0, gt->host_total, gt->host_since_erase };

	sg_iso_at(g, gt->clock, a.started_at, sizeof(a.started_at));
	rt->action = gt->clock;
	int ret = db_action_start(g->db, rt->cycle_id, &a);
	if (ret)
		return ret;
	a.seconds = 4.0 + 10.0 * sg_rnd01(&gt->rng);
	a.bytes = gt->mapped;
	gt->clock += a.seconds;
	gt->mapped = 0;
	return db_action_end(g->db, rt->cycle_id, &a, &s);
}
