/* db_stmt: every statement the db module keeps prepared, with the number of
 * values its binding code binds; db_conn.c refuses to run one whose count
 * differs from the placeholders SQLite found, and test_db prepares them all
 * and compares. Grouped by the table they write. */
#include "db/db_int.h"

#define INTERRUPTED_ERROR "daemon stopped without finishing (crash or kill)"
#define ACTION_CRASHED_ERROR                                                                       \
	"the daemon stopped during the action (crash or kill); not run again, "                    \
	"its effect on the drive is unknown"

/* clang-format off */
const struct db_stmt db_stmts[ST__COUNT] = {
	[ST_BEGIN] = { 0,
		  "BEGIN IMMEDIATE" },
	[ST_COMMIT] = { 0,
		  "COMMIT" },
	[ST_ROLLBACK] = { 0,
		  "ROLLBACK" },
	[ST_RUN_BEGIN] = { 4,
		  "INSERT INTO runs (pid, version, config_path, hostname)"
		   " VALUES (?, ?, ?, ?)" },
	[ST_RUN_END] = { 3,
		  "UPDATE runs SET ended_at = " NOW ", exit_status = ?,"
		         " exit_reason = ? WHERE id = ?" },
	[ST_RUN_CONFIG] = { 3,
		  "UPDATE runs SET config = ?, kernel = ? WHERE id = ?" },
	[ST_TARGET_UPSERT] = { 11,
		  "INSERT INTO targets (name, device, kind, capacity_bytes,"
		  " logical_block_size, serial, model, firmware, backing_file,"
		  " backing_dev, backing_ino)"
		  " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
		  " ON CONFLICT (name) DO UPDATE SET device = excluded.device,"
		  " kind = excluded.kind, capacity_bytes = excluded.capacity_bytes,"
		  " logical_block_size = excluded.logical_block_size,"
		  " serial = excluded.serial, model = excluded.model,"
		  " firmware = excluded.firmware, backing_file = excluded.backing_file,"
		  " backing_dev = excluded.backing_dev, backing_ino = excluded.backing_ino,"
		  " last_seen = " NOW " RETURNING id" },
	[ST_MARK_INTERRUPTED] = { 1,
		  "UPDATE iterations SET status = 'interrupted', error = '"
		  INTERRUPTED_ERROR "' WHERE target_id = ? AND status = 'running'" },
	[ST_RUNNING_COUNT] = { 1,
		  "SELECT count(*) FROM iterations WHERE target_id = ? AND status = 'running'" },
	[ST_TARGET_ID] = { 1,
		  "SELECT id FROM targets WHERE name = ?" },
	[ST_CAMPAIGN] = { 1,
		  "SELECT t.campaign_first_cycle, (SELECT count(*) FROM cycles c"
		  " WHERE c.target_id = t.id AND c.status = 'done'"
		  " AND c.number >= t.campaign_first_cycle), t.campaign_key"
		  " FROM targets t WHERE t.id = ?" },
	[ST_LAST_CYCLE] = { 1,
		  "SELECT id, number, status IN ('running', 'interrupted'),"
		  " action_started_at IS NOT NULL, action_ended_at IS NOT NULL,"
		  " CASE WHEN action_outcome = 'interrupted' THEN 1"
		  " WHEN action_outcome IN ('ok', 'skipped') THEN 2 ELSE 0 END"
		    " FROM cycles WHERE target_id = ? ORDER BY number DESC LIMIT 1" },
	[ST_CYCLE_PROGRESS] = { 1,
		  "SELECT coalesce(max(CASE WHEN status = 'done' AND more_rows = 0"
		  " THEN size_index END) + 1, 0),"
		  " coalesce(max(number), 0) + 1 FROM iterations WHERE cycle_id = ?" },
	[ST_CYCLE_PLAN] = { 3,
		  "UPDATE cycles SET nsizes = ?, cycles_planned = ? WHERE id = ?" },
	[ST_CYCLE_REOPEN] = { 1,
		  "UPDATE cycles SET status = 'running', ended_at = NULL"
		      " WHERE id = ?" },
	[ST_CAMPAIGN_NEW] = { 3,
		  "UPDATE targets SET campaign_first_cycle = ?, campaign_key = ?,"
		  " campaign_done_at = NULL WHERE id = ?" },
	[ST_CAMPAIGN_KEY] = { 2,
		  "UPDATE targets SET campaign_key = ? WHERE id = ?" },
	[ST_CAMPAIGN_DONE] = { 1,
		  "UPDATE targets SET campaign_done_at = coalesce(campaign_done_at, " NOW ")"
		  " WHERE id = ?" },
	[ST_CYCLE_BEGIN] = { 3,
		  "INSERT INTO cycles (target_id, run_id, number, campaign_first_cycle)"
		     " VALUES (?1, ?2, ?3, (SELECT campaign_first_cycle FROM targets"
		     " WHERE id = ?1))" },
	/* an action: its start before it runs, its end after (with the wear
	 * state it leaves, db_action_end); a start without an end that a
	 * restart finds was cut short by a crash, and is closed, not re-run */
	[ST_ACTION_START] = { 3,
		  "UPDATE cycles SET action = ?, action_started_at = coalesce(?, " NOW "),"
		  " action_ended_at = NULL, action_seconds = NULL, action_bytes = NULL,"
		  " action_outcome = NULL, action_error = NULL WHERE id = ?" },
	[ST_ACTION_END] = { 5,
		  "UPDATE cycles SET action_ended_at = " NOW ", action_seconds = ?,"
		  " action_bytes = ?, action_outcome = ?, action_error = ? WHERE id = ?" },
	[ST_ACTION_CRASHED] = { 1,
		  "UPDATE cycles SET status = 'done', action_outcome = 'interrupted',"
		  " action_error = '" ACTION_CRASHED_ERROR "' WHERE id = ?" },
	[ST_ACTION_CLOSE] = { 2,
		  "UPDATE cycles SET status = ?, ended_at = action_ended_at WHERE id = ?" },
	[ST_CYCLE_END] = { 2,
		  "UPDATE cycles SET status = ?, ended_at = " NOW " WHERE id = ?" },
	[ST_IT_BEGIN] = { 25,
		  "INSERT INTO iterations (cycle_id, run_id, target_id, number,"
		  " size_index, size_bytes, region_offset, workload, block_size,"
		  " queue_depth, compressibility, amount_bytes, started_at, phase,"
		  " repeat_index, more_rows, block_sizes, read_percent, random_percent,"
		  " verify, round_index, jobs, dedupe_percent, baseline,"
		  " baseline_iteration_id)"
		  " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, coalesce(?, " NOW "),"
		  " ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" },
	[ST_IT_END] = { 36,
		  "UPDATE iterations SET ended_at = coalesce(?, " NOW "), bytes = ?,"
		  " ops = ?, seconds = ?, mibps_avg = ?, mibps_min = ?, mibps_max = ?,"
		  " mibps_stddev = ?, iops_avg = ?, lat_mean_us = ?, lat_p50_us = ?,"
		  " lat_p99_us = ?, lat_p999_us = ?, lat_max_us = ?, fill_mibps = ?,"
		  " fill_seconds = ?, fill_bytes = ?, errors = ?, status = ?, error = ?,"
		  " lat_p90_us = ?, lat_p9999_us = ?, verify_errors = ?,"
		  " mibps_repeat_mean = ?, mibps_repeat_stddev = ?, iops_repeat_mean = ?,"
		  " iops_repeat_stddev = ?, more_rows = ?, steady_reached = ?,"
		  " steady_round = ?, steady_mean_mibps = ?, steady_range_mibps = ?,"
		  " steady_range_pct = ?, steady_excursion_mibps = ?,"
		  " steady_excursion_pct = ? WHERE id = ?" },
	[ST_IT_IO] = { 4,
		  "UPDATE iterations SET reads = ?, writes = ?, random_ios = ? WHERE id = ?" },
	[ST_IT_STALL] = { 3,
		  "UPDATE iterations SET host_stall_seconds = ?, lat_host_stall = ?"
		  " WHERE id = ?" },
	[ST_IT_DEPTH] = { 2,
		  "UPDATE iterations SET mean_depth = ? WHERE id = ?" },
	[ST_IT_DEVICE] = { 10,
		  "UPDATE iterations SET device_host_bytes = ?, device_media_bytes = ?,"
		  " device_peak_temp_c = ?, device_throttle_seconds = ?,"
		  " device_media_errors = ?, device_spare_pct = ?, device_throttle_ms = ?,"
		  " device_throttle_res_ms = ?, device_wa = ? WHERE id = ?" },
	/* integers (schema 16); the view samples shows the rates and units */
	[ST_SAMPLE] = { 14,
		  "INSERT INTO sample_data (iteration_id, phase, t_ms, duration_ns,"
		        " bytes, ops, lat_p50_ns, lat_p90_ns, lat_p99_ns, lat_p999_ns,"
		        " lat_p9999_ns, lat_max_ns, host_stall_ns, mibps_min_1s)"
		        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" },
	/* the drive's readings during an iteration (schema 25) */
	[ST_SERIES] = { 8,
		  "INSERT INTO device_series (iteration_id, phase, t_ms, host_bytes,"
		        " media_bytes, temp_c, throttle_ms, host_stall_ms)"
		        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)" },
	[ST_EVENT] = { 11,
		  "INSERT INTO events (target_id, run_id, cycle_id, iteration_id,"
		       " severity, kind, message_id, message, value, baseline, data)"
		       " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" },	/* wear: the mapped extents and host counters of a target, and one row
	 * per iteration accounted for */
	[ST_EXTENTS_DELETE] = { 1,
		  "DELETE FROM mapped_extents WHERE target_id = ?" },
	[ST_EXTENT_INSERT] = { 3,
		  "INSERT INTO mapped_extents (target_id, start_byte, end_byte)"
		  " VALUES (?, ?, ?)" },
	[ST_WRITTEN_INSERT] = { 3,
		  "INSERT INTO written_extents (iteration_id, start_byte, end_byte)"
		  " VALUES (?, ?, ?)" },
	[ST_WRITTEN_DELETE] = { 1,
		  "DELETE FROM written_extents WHERE iteration_id = ?" },
	/* a fill cut short by a crash or kill: the prefix its samples counted
	 * by the last progress row (fills are sequential from the span start,
	 * one job; daemon/iter.c) */
	[ST_WRITTEN_RECOVER] = { 1,
		  "INSERT INTO written_extents (iteration_id, start_byte, end_byte)"
		  " SELECT i.id, i.region_offset, i.region_offset"
		  " + min(p.phase_bytes, i.size_bytes) FROM iterations i"
		  " JOIN cycles c ON c.id = i.cycle_id"
		  " JOIN progress p ON p.target_id = i.target_id AND p.cycle = c.number"
		  " AND p.iteration = i.number"
		  " WHERE i.target_id = ? AND i.status = 'running' AND p.phase = 'fill'"
		  " AND p.phase_bytes > 0" },
	[ST_WEAR_COUNTERS] = { 3,
		  "UPDATE targets SET host_bytes_total = ?, host_bytes_since_erase = ?"
		  " WHERE id = ?" },
	[ST_WEAR_INSERT] = { 9,
		  "INSERT INTO wear (iteration_id, capacity_bytes, region_bytes,"
		  " op_configured, mapped_bytes, op_effective, host_bytes_written,"
		  " host_bytes_since_erase, host_bytes_total)"
		  " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)" },
	/* health: one snapshot of the drive's counters */
	[ST_HEALTH_INSERT] = { 22,
		  "INSERT INTO health (target_id, cycle_id, source, sectors_read,"
		  " sectors_written, percentage_used, data_units_read, data_units_written,"
		  " media_errors, available_spare, temperature_c, critical_warning,"
		  " power_on_hours, nand_bytes_written, host_bytes_written,"
		  " write_amplification, data, point, host_bytes_delta, nand_bytes_delta,"
		  " mapped_bytes, op_effective)"
		  " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" },
	/* progress: what a target is doing now */
	[ST_PROGRESS] = { 14,
		  "INSERT INTO progress (target_id, updated_at, cycle, iteration, size_bytes,"
		  " phase, mibps, phase_bytes, nsizes, cycles, phase_seconds, duration_seconds,"
		  " iteration_seconds, stage, remaining_seconds)"
		  " VALUES (?, " NOW ", ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
		  " ON CONFLICT (target_id) DO UPDATE SET updated_at = excluded.updated_at,"
		  " cycle = excluded.cycle, iteration = excluded.iteration,"
		  " size_bytes = excluded.size_bytes, phase = excluded.phase,"
		  " mibps = excluded.mibps, phase_bytes = excluded.phase_bytes,"
		  " nsizes = excluded.nsizes, cycles = excluded.cycles,"
		  " phase_seconds = excluded.phase_seconds,"
		  " duration_seconds = excluded.duration_seconds,"
		  " iteration_seconds = excluded.iteration_seconds,"
		  " stage = excluded.stage, remaining_seconds = excluded.remaining_seconds" },
	/* adopting a new device under a target's name (with ST_EXTENTS_DELETE) */
	[ST_ADOPT_FAIL_CYCLES] = { 1,
		  "UPDATE cycles SET status = 'failed', ended_at = coalesce(ended_at, " NOW ")"
		  " WHERE target_id = ? AND status IN ('running', 'interrupted')" },
	[ST_ADOPT_STALE] = { 1,
		  "UPDATE iterations SET status = 'interrupted', error = 'device replaced'"
		  " WHERE target_id = ? AND status = 'running'" },
	[ST_ADOPT_CAMPAIGN] = { 1,
		  "UPDATE targets SET campaign_first_cycle = (SELECT coalesce(max(number), 0) + 1"
		  " FROM cycles WHERE target_id = ?1) WHERE id = ?1" },
	[ST_ADOPT_WEAR] = { 1,
		  "UPDATE targets SET host_bytes_total = 0, host_bytes_since_erase = 0 WHERE id = ?" },
	[ST_ADOPT_EVENT] = { 7,
		  "INSERT INTO events (target_id, run_id, severity, kind, message, data)"
		  " VALUES (?, ?, 'notice', 'device-replaced', ?, json_object('old_serial', ?,"
		  " 'old_model', ?, 'new_serial', ?, 'new_model', ?))" },
	[ST_OWNED_ADD] = { 4,
		  "INSERT OR REPLACE INTO owned_files (dev, ino, target, path)"
		  " VALUES (?, ?, ?, ?)" },
	/* the filesystems filesystem mode made (schema 24, db_guard.c) */
	[ST_FS_MADE_ADD] = { 4,
		  "INSERT OR IGNORE INTO made_filesystems (target_id, uuid, type, device)"
		  " VALUES (?, ?, ?, ?)" },
	/* host idle recovery (schema 22, db_hir.c) */
	[ST_HIR_INSERT] = { 21,
		  "INSERT INTO hir_bursts (cycle_id, target_id, run_id, kind, wait_state,"
		  " wait_seconds, idle_seconds, repetition, started_at, seconds, bytes, ops,"
		  " mibps, iops, lat_mean_us, lat_p99_us, device_host_bytes,"
		  " device_media_bytes, device_wa, device_peak_temp_c, steady)"
		  " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" },
	[ST_HIR_PROGRESS] = { 1,
		  "SELECT (SELECT count(*) FROM hir_purges q WHERE q.cycle_id = ?1"
		  "   AND (q.outcome = 'ok' OR q.method = 'none')),"
		  " (SELECT count(*) FROM hir_bursts p WHERE p.cycle_id = ?1"
		  "   AND p.kind = 'precondition' AND p.steady IS NOT NULL),"
		  " (SELECT count(*) FROM hir_bursts p WHERE p.cycle_id = ?1"
		  "   AND p.kind = 'precondition'),"
		  " s.state,"
		  " (SELECT coalesce(max(b.repetition), 0) FROM hir_bursts b"
		  "   WHERE b.cycle_id = ?1 AND b.kind = 'burst' AND b.wait_state = s.state),"
		  " (SELECT count(*) FROM hir_bursts b WHERE b.cycle_id = ?1"
		  "   AND b.kind = 'baseline' AND b.repetition = 1 AND b.wait_state = s.state)"
		  " FROM (SELECT coalesce(max(wait_state), 0) AS state FROM hir_bursts"
		  "   WHERE cycle_id = ?1 AND (kind = 'burst' OR"
		  "   (kind = 'baseline' AND repetition = 1))) s" },
	/* its writes in the target's counters (schema 23, db_wear.c) */
	[ST_HIR_WEAR] = { 5,
		  "UPDATE hir_bursts SET mapped_bytes = ?, op_effective = ?,"
		  " host_bytes_since_erase = ?, host_bytes_total = ? WHERE id = ?" },
	/* a command: recorded before it execs, ended after it is reaped (or
	 * by the next start, for one an earlier run left behind) */
	[ST_CMD_START] = { 8,
		  "INSERT INTO commands (run_id, target_id, tag, argv, pid, session_id,"
		  " start_ticks, boot_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)" },
	[ST_CMD_END] = { 3,
		  "UPDATE commands SET ended_at = " NOW ", ended_how = ?, status = ?"
		  " WHERE id = ? AND ended_at IS NULL" },
	[ST_CMD_LEFTOVER] = { 4,
		  "UPDATE commands SET ended_at = " NOW ", ended_how = ?, status = ?,"
		  " ended_by_run_id = ? WHERE id = ? AND ended_at IS NULL" },
	/* the idle wait after a burst and the purge (schema 27, db_hir.c) */
	[ST_HIR_IDLE] = { 4,
		  "UPDATE hir_bursts SET idle_after_seconds = ?, idle_host_bytes = ?,"
		  " idle_media_bytes = ? WHERE id = ?"
		  " AND (kind = 'burst' OR (kind = 'baseline' AND repetition = 0))" },
	[ST_HIR_PURGE] = { 10,
		  "INSERT INTO hir_purges (cycle_id, target_id, run_id, method, erase, outcome,"
		  " started_at, seconds, bytes, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" },
	/* the purge's secure_erase_command that ran to its end after the
	 * cycle's last purge row ended: a stop came between the erase and its
	 * row (daemon/hir.c), so the erase is done */
	[ST_HIR_ERASED] = { 3,
		  "SELECT c.id, c.started_at,"
		  " (julianday(c.ended_at) - julianday(c.started_at)) * 86400.0"
		  " FROM commands c WHERE c.target_id = ?1 AND c.tag = ?2"
		  " AND c.ended_how = 'exited' AND c.status = 0"
		  " AND c.started_at >= (SELECT y.started_at FROM cycles y WHERE y.id = ?3)"
		  " AND c.started_at >= coalesce((SELECT max(strftime('%Y-%m-%dT%H:%M:%fZ',"
		  "   julianday(q.started_at) + q.seconds / 86400.0)) FROM hir_purges q"
		  "   WHERE q.cycle_id = ?3), '')"
		  " ORDER BY c.id DESC LIMIT 1" },
	/* a cell of a PTS test (schema 28; daemon/pts.c) */
	[ST_IT_PTS] = { 16,
		  "UPDATE iterations SET pts_test = ?, pts_variant = ?, pts_round = ?,"
		  " pts_cell = ?, pts_part = ?, pts_active_pct = ?, pts_tracking = ?,"
		  " lat_p99999_us = ?, pts_ss_reached = ?, pts_ss_first_round = ?, pts_ss_mean = ?,"
		  " pts_ss_range_pct = ?, pts_ss_slope = ?, pts_ss_excursion_pct = ?,"
		  " pts_lat_hist = ? WHERE id = ?" },
	[ST_TARGET_RATING] = { 5,
		  "UPDATE targets SET rated_tbw = ?, rated_dwpd = ?, warranty_years = ?,"
		  " warranty_start = ? WHERE id = ?" },
};
/* clang-format on */
