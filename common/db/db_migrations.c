/* db_migrations: the text of the migration scripts, one per schema
 * version (common/db/schema.md documents every table and column). */
#include "db/db_int.h"
#include "db/db_schema_sql.h"
#include "db/db_views.h"

/* migrations[v] turns a version v-1 database into version v; each script runs
 * inside the one transaction that also sets PRAGMA user_version. Later issues
 * append scripts (ALTER TABLE ... ADD COLUMN, new tables and views) and bump
 * DB_SCHEMA_VERSION; a released script is never edited (not even re-indented:
 * clang-format leaves the table alone). */
/* clang-format off */
const char *const db_migrations[] = {
	[0] = NULL,
	[1] =
	"CREATE TABLE targets (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  name TEXT NOT NULL UNIQUE,\n"
	"  device TEXT NOT NULL,\n"
	"  kind TEXT NOT NULL,\n"
	"  capacity_bytes INTEGER NOT NULL,\n"
	"  logical_block_size INTEGER NOT NULL,\n"
	"  serial TEXT,\n"
	"  model TEXT,\n"
	"  firmware TEXT,\n"
	"  backing_file TEXT,\n"
	"  campaign_first_cycle INTEGER NOT NULL DEFAULT 1,\n"
	"  first_seen TEXT NOT NULL DEFAULT (" NOW "),\n"
	"  last_seen TEXT NOT NULL DEFAULT (" NOW ")\n"
	");\n"
	"CREATE TABLE runs (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  started_at TEXT NOT NULL DEFAULT (" NOW "),\n"
	"  ended_at TEXT,\n"
	"  pid INTEGER NOT NULL,\n"
	"  version TEXT NOT NULL,\n"
	"  config_path TEXT,\n"
	"  hostname TEXT,\n"
	"  exit_status INTEGER,\n"
	"  exit_reason TEXT\n"
	");\n"
	"CREATE TABLE cycles (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  target_id INTEGER NOT NULL REFERENCES targets(id),\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(id),\n"
	"  number INTEGER NOT NULL CHECK (number >= 1),\n"
	"  started_at TEXT NOT NULL DEFAULT (" NOW "),\n"
	"  ended_at TEXT,\n"
	"  status TEXT NOT NULL DEFAULT 'running'\n"
	"    CHECK (status IN ('running', 'done', 'interrupted', 'failed')),\n"
	"  action TEXT,\n"
	"  action_started_at TEXT,\n"
	"  action_seconds REAL,\n"
	"  action_bytes INTEGER,\n"
	"  action_outcome TEXT,\n"
	"  action_error TEXT,\n"
	"  UNIQUE (target_id, number)\n"
	");\n"
	"CREATE TABLE iterations (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  cycle_id INTEGER NOT NULL REFERENCES cycles(id),\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(id),\n"
	"  target_id INTEGER NOT NULL REFERENCES targets(id),\n"
	"  number INTEGER NOT NULL CHECK (number >= 1),\n"
	"  size_index INTEGER NOT NULL CHECK (size_index >= 0),\n"
	"  size_bytes INTEGER NOT NULL,\n"
	"  region_offset INTEGER NOT NULL,\n"
	"  workload TEXT NOT NULL,\n"
	"  block_size INTEGER NOT NULL,\n"
	"  queue_depth INTEGER NOT NULL,\n"
	"  compressibility INTEGER NOT NULL,\n"
	"  amount_bytes INTEGER NOT NULL,\n"
	"  started_at TEXT NOT NULL,\n"
	"  ended_at TEXT,\n"
	"  bytes INTEGER,\n"
	"  ops INTEGER,\n"
	"  seconds REAL,\n"
	"  mibps_avg REAL,\n"
	"  mibps_min REAL,\n"
	"  mibps_max REAL,\n"
	"  mibps_stddev REAL,\n"
	"  iops_avg REAL,\n"
	"  lat_mean_us REAL,\n"
	"  lat_p50_us REAL,\n"
	"  lat_p99_us REAL,\n"
	"  lat_p999_us REAL,\n"
	"  lat_max_us REAL,\n"
	"  fill_mibps REAL,\n"
	"  fill_seconds REAL,\n"
	"  fill_bytes INTEGER,\n"
	"  errors INTEGER,\n"
	"  status TEXT NOT NULL DEFAULT 'running'\n"
	"    CHECK (status IN ('running', 'done', 'interrupted', 'failed')),\n"
	"  error TEXT,\n"
	"  UNIQUE (cycle_id, number)\n"
	");\n"
	"CREATE INDEX iterations_target_status ON iterations (target_id, status);\n"
	"CREATE INDEX iterations_target_started ON iterations (target_id, started_at);\n"
	"CREATE TABLE samples (\n"
	"  iteration_id INTEGER NOT NULL REFERENCES iterations(id),\n"
	"  phase TEXT NOT NULL CHECK (phase IN ('fill', 'measure')),\n"
	"  t_ms INTEGER NOT NULL,\n"
	"  mibps REAL,\n"
	"  iops REAL,\n"
	"  lat_p50_us REAL,\n"
	"  lat_p99_us REAL,\n"
	"  lat_max_us REAL,\n"
	"  PRIMARY KEY (iteration_id, phase, t_ms)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE events (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  at TEXT NOT NULL DEFAULT (" NOW "),\n"
	"  target_id INTEGER REFERENCES targets(id),\n"
	"  run_id INTEGER REFERENCES runs(id),\n"
	"  cycle_id INTEGER REFERENCES cycles(id),\n"
	"  iteration_id INTEGER REFERENCES iterations(id),\n"
	"  severity TEXT NOT NULL CHECK (severity IN ('emerg', 'alert', 'crit',\n"
	"    'err', 'warning', 'notice', 'info', 'debug')),\n"
	"  kind TEXT NOT NULL,\n"
	"  message_id TEXT,\n"
	"  message TEXT NOT NULL,\n"
	"  value REAL,\n"
	"  baseline REAL,\n"
	"  data TEXT\n"
	");\n"
	"CREATE INDEX events_target_at ON events (target_id, at);\n"
	"CREATE INDEX events_at ON events (at);\n"
	"CREATE VIEW history AS\n"
	"  SELECT t.name AS target, c.number AS cycle, i.number AS iteration,\n"
	"         i.size_bytes, i.mibps_avg, i.mibps_min, i.mibps_max, i.iops_avg,\n"
	"         i.lat_p99_us, i.status, i.workload, i.block_size, i.fill_mibps,\n"
	"         i.started_at, i.id AS iteration_id\n"
	"  FROM iterations i\n"
	"  JOIN cycles c ON c.id = i.cycle_id\n"
	"  JOIN targets t ON t.id = i.target_id;\n",
	/* Views for sqlite3 users. Plain SQL that any sqlite3 since 3.8.2 can
	 * parse (no window functions, no CTEs): a view it cannot parse would
	 * make the whole file unreadable to it. */
	[2] =
	"CREATE VIEW cycle_summary AS\n"
	"  SELECT t.name AS target, c.number AS cycle, c.started_at, c.ended_at,\n"
	"         c.status, count(i.id) AS iterations,\n"
	"         min(i.mibps_min) AS mibps_min, avg(i.mibps_avg) AS mibps_avg,\n"
	"         max(i.mibps_max) AS mibps_max, c.action, c.action_outcome,\n"
	"         c.action_seconds, c.action_bytes, c.id AS cycle_id\n"
	"  FROM cycles c\n"
	"  JOIN targets t ON t.id = c.target_id\n"
	"  LEFT JOIN iterations i ON i.cycle_id = c.id AND i.status = 'done'\n"
	"  GROUP BY c.id;\n"
	/* The baseline: the earliest cycle that measured this size, workload
	 * and block size to the end, averaged over its rows (repeats). */
	"CREATE VIEW degradation AS\n"
	"  SELECT t.name AS target, c.number AS cycle, i.number AS iteration,\n"
	"         i.size_bytes, i.workload, i.block_size, i.mibps_avg,\n"
	"         b.mibps_avg AS baseline_mibps, b.cycle AS baseline_cycle,\n"
	"         i.mibps_avg / b.mibps_avg AS ratio, i.started_at,\n"
	"         i.id AS iteration_id\n"
	"  FROM iterations i\n"
	"  JOIN cycles c ON c.id = i.cycle_id\n"
	"  JOIN targets t ON t.id = i.target_id\n"
	"  JOIN (SELECT f.target_id, f.size_bytes, f.workload, f.block_size, f.cycle,\n"
	"               avg(x.mibps_avg) AS mibps_avg\n"
	"        FROM (SELECT bi.target_id, bi.size_bytes, bi.workload, bi.block_size,\n"
	"                     min(bc.number) AS cycle\n"
	"              FROM iterations bi\n"
	"              JOIN cycles bc ON bc.id = bi.cycle_id\n"
	"              WHERE bi.status = 'done'\n"
	"              GROUP BY bi.target_id, bi.size_bytes, bi.workload,\n"
	"                       bi.block_size) f\n"
	"        JOIN cycles xc ON xc.target_id = f.target_id AND xc.number = f.cycle\n"
	"        JOIN iterations x ON x.cycle_id = xc.id AND x.status = 'done'\n"
	"         AND x.size_bytes = f.size_bytes AND x.workload = f.workload\n"
	"         AND x.block_size = f.block_size\n"
	"        GROUP BY f.target_id, f.size_bytes, f.workload, f.block_size,\n"
	"                 f.cycle) b\n"
	"    ON b.target_id = i.target_id AND b.size_bytes = i.size_bytes\n"
	"   AND b.workload = i.workload AND b.block_size = i.block_size\n"
	"  WHERE i.status = 'done';\n"
	"CREATE VIEW alerts AS\n"
	"  SELECT e.at, t.name AS target, e.severity, e.kind, c.number AS cycle,\n"
	"         e.message, e.value, e.baseline, e.message_id, e.iteration_id,\n"
	"         e.id AS event_id\n"
	"  FROM events e\n"
	"  LEFT JOIN targets t ON t.id = e.target_id\n"
	"  LEFT JOIN cycles c ON c.id = e.cycle_id\n"
	"  WHERE e.severity IN ('emerg', 'alert', 'crit', 'err', 'warning', 'notice')\n"
	"  ORDER BY e.at, e.id;\n",
	/* Device state: what the host has written and not trimmed (mapped
	 * extents), the over-provisioning of every iteration, health snapshots. */
	[3] =
	"ALTER TABLE targets ADD COLUMN host_bytes_total INTEGER NOT NULL DEFAULT 0;\n"
	"ALTER TABLE targets ADD COLUMN host_bytes_since_erase INTEGER NOT NULL DEFAULT 0;\n"
	"CREATE TABLE mapped_extents (\n"
	"  target_id INTEGER NOT NULL REFERENCES targets(id),\n"
	"  start_byte INTEGER NOT NULL,\n"
	"  end_byte INTEGER NOT NULL,\n"
	"  PRIMARY KEY (target_id, start_byte)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE wear (\n"
	"  iteration_id INTEGER PRIMARY KEY REFERENCES iterations(id),\n"
	"  capacity_bytes INTEGER NOT NULL,\n"
	"  region_bytes INTEGER NOT NULL,\n"
	"  op_configured REAL NOT NULL,\n"
	"  mapped_bytes INTEGER NOT NULL,\n"
	"  op_effective REAL NOT NULL,\n"
	"  host_bytes_written INTEGER NOT NULL,\n"
	"  host_bytes_since_erase INTEGER NOT NULL,\n"
	"  host_bytes_total INTEGER NOT NULL\n"
	");\n"
	"CREATE TABLE health (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  target_id INTEGER NOT NULL REFERENCES targets(id),\n"
	"  cycle_id INTEGER REFERENCES cycles(id),\n"
	"  at TEXT NOT NULL DEFAULT (" NOW "),\n"
	"  source TEXT NOT NULL,\n"
	"  sectors_read INTEGER,\n"
	"  sectors_written INTEGER,\n"
	"  percentage_used INTEGER,\n"
	"  data_units_read INTEGER,\n"
	"  data_units_written INTEGER,\n"
	"  media_errors INTEGER,\n"
	"  available_spare INTEGER,\n"
	"  temperature_c INTEGER,\n"
	"  critical_warning INTEGER,\n"
	"  power_on_hours INTEGER,\n"
	"  nand_bytes_written INTEGER,\n"
	"  host_bytes_written INTEGER,\n"
	"  write_amplification REAL,\n"
	"  data TEXT\n"
	");\n"
	"CREATE INDEX health_target_at ON health (target_id, at);\n"
	"CREATE VIEW overprovisioning AS\n"
	"  SELECT t.name AS target, c.number AS cycle, i.number AS iteration,\n"
	"         i.size_bytes, i.mibps_avg, w.capacity_bytes, w.region_bytes,\n"
	"         w.op_configured, w.mapped_bytes, w.op_effective,\n"
	"         w.host_bytes_written, w.host_bytes_since_erase, w.host_bytes_total,\n"
	"         i.id AS iteration_id\n"
	"  FROM wear w\n"
	"  JOIN iterations i ON i.id = w.iteration_id\n"
	"  JOIN cycles c ON c.id = i.cycle_id\n"
	"  JOIN targets t ON t.id = i.target_id;\n",
	/* Methodology: how each row was measured (phase of the size, repeat,
	 * block size mix, read and random shares, verification) and the latency
	 * QoS percentiles. more_rows = 1 while further rows of the same size
	 * follow, so a size is done only when its last row is. */
	[4] =
	"ALTER TABLE iterations ADD COLUMN phase TEXT;\n"
	"ALTER TABLE iterations ADD COLUMN repeat_index INTEGER;\n"
	"ALTER TABLE iterations ADD COLUMN more_rows INTEGER NOT NULL DEFAULT 0;\n"
	"ALTER TABLE iterations ADD COLUMN block_sizes TEXT;\n"
	"ALTER TABLE iterations ADD COLUMN read_percent INTEGER;\n"
	"ALTER TABLE iterations ADD COLUMN random_percent INTEGER;\n"
	"ALTER TABLE iterations ADD COLUMN verify TEXT;\n"
	"ALTER TABLE iterations ADD COLUMN verify_errors INTEGER;\n"
	"ALTER TABLE iterations ADD COLUMN lat_p90_us REAL;\n"
	"ALTER TABLE iterations ADD COLUMN lat_p9999_us REAL;\n"
	"ALTER TABLE iterations ADD COLUMN mibps_repeat_mean REAL;\n"
	"ALTER TABLE iterations ADD COLUMN mibps_repeat_stddev REAL;\n"
	"ALTER TABLE iterations ADD COLUMN iops_repeat_mean REAL;\n"
	"ALTER TABLE iterations ADD COLUMN iops_repeat_stddev REAL;\n"
	"ALTER TABLE samples ADD COLUMN lat_p90_us REAL;\n"
	"ALTER TABLE samples ADD COLUMN lat_p999_us REAL;\n"
	"ALTER TABLE samples ADD COLUMN lat_p9999_us REAL;\n"
	"ALTER TABLE samples ADD COLUMN mibps_min_1s REAL;\n",
	/* SNIA PTS steady state: every round of a phase is a row (round_index);
	 * the last round of the phase carries the verdict and the window.
	 * jobs: the threads whose I/O one row sums. */
	[5] =
	"ALTER TABLE iterations ADD COLUMN round_index INTEGER;\n"
	"ALTER TABLE iterations ADD COLUMN steady_reached INTEGER;\n"
	"ALTER TABLE iterations ADD COLUMN steady_round INTEGER;\n"
	"ALTER TABLE iterations ADD COLUMN steady_mean_mibps REAL;\n"
	"ALTER TABLE iterations ADD COLUMN steady_range_mibps REAL;\n"
	"ALTER TABLE iterations ADD COLUMN steady_range_pct REAL;\n"
	"ALTER TABLE iterations ADD COLUMN steady_excursion_mibps REAL;\n"
	"ALTER TABLE iterations ADD COLUMN steady_excursion_pct REAL;\n"
	"ALTER TABLE iterations ADD COLUMN jobs INTEGER;\n"
	"CREATE VIEW steady_state AS\n"
	"  SELECT t.name AS target, c.number AS cycle, i.number AS iteration,\n"
	"         i.size_bytes, i.workload, i.block_size, i.round_index AS rounds,\n"
	"         i.steady_reached, i.steady_round, i.steady_mean_mibps,\n"
	"         i.steady_range_mibps, i.steady_range_pct,\n"
	"         i.steady_excursion_mibps, i.steady_excursion_pct, i.status,\n"
	"         i.started_at, i.id AS iteration_id\n"
	"  FROM iterations i\n"
	"  JOIN cycles c ON c.id = i.cycle_id\n"
	"  JOIN targets t ON t.id = i.target_id\n"
	"  WHERE i.steady_reached IS NOT NULL;\n",
	/* dedupe_percent: the share of writes that repeated an earlier block. */
	[6] =
	"ALTER TABLE iterations ADD COLUMN dedupe_percent INTEGER NOT NULL DEFAULT 0;\n",
	/* What each target is doing right now, rewritten every second by the
	 * daemon's main loop (never by the I/O threads), for `wearmon status`. */
	[7] =
	"CREATE TABLE progress (\n"
	"  target_id INTEGER PRIMARY KEY REFERENCES targets(id),\n"
	"  updated_at TEXT NOT NULL,\n"
	"  cycle INTEGER,\n"
	"  iteration INTEGER,\n"
	"  size_bytes INTEGER,\n"
	"  phase TEXT,\n"
	"  mibps REAL,\n"
	"  phase_bytes INTEGER\n"
	");\n",
	/* The I/O actually completed: reads, writes and the non-contiguous share,
	 * so that a mix's read and random fractions can be checked. */
	[8] =
	"ALTER TABLE iterations ADD COLUMN reads INTEGER;\n"
	"ALTER TABLE iterations ADD COLUMN writes INTEGER;\n"
	"ALTER TABLE iterations ADD COLUMN random_ios INTEGER;\n",
	/* Wear where it belongs and one baseline. A health snapshot says which
	 * point of the cycle it was taken at and the deltas since the previous
	 * one; every iteration stores the iteration it is compared with (the
	 * one the alerts use), and `degradation` reads that instead of
	 * choosing its own. */
	[9] =
	"ALTER TABLE health ADD COLUMN point TEXT\n"
	"  CHECK (point IN ('cycle-start', 'cycle-end', 'after-action'));\n"
	"ALTER TABLE health ADD COLUMN host_bytes_delta INTEGER;\n"
	"ALTER TABLE health ADD COLUMN nand_bytes_delta INTEGER;\n"
	"ALTER TABLE health ADD COLUMN mapped_bytes INTEGER;\n"
	"ALTER TABLE health ADD COLUMN op_effective REAL;\n"
	"ALTER TABLE iterations ADD COLUMN baseline TEXT;\n"
	"ALTER TABLE iterations ADD COLUMN baseline_iteration_id INTEGER;\n"
	/* Rows from before: the "first" rule, the cycles before the current
	 * campaign counting as one earlier campaign. */
	"UPDATE iterations SET baseline = 'first', baseline_iteration_id =\n"
	"  (SELECT b.id FROM iterations b\n"
	"   JOIN cycles bc ON bc.id = b.cycle_id\n"
	"   JOIN targets t ON t.id = b.target_id\n"
	"   JOIN cycles ic ON ic.id = iterations.cycle_id\n"
	"   WHERE b.target_id = iterations.target_id\n"
	"     AND b.size_bytes = iterations.size_bytes\n"
	"     AND b.workload = iterations.workload\n"
	"     AND b.block_size = iterations.block_size\n"
	"     AND b.id < iterations.id AND b.status = 'done' AND b.mibps_avg > 0\n"
	"     AND (bc.number >= t.campaign_first_cycle)\n"
	"       = (ic.number >= t.campaign_first_cycle)\n"
	"   ORDER BY bc.number, b.id LIMIT 1);\n"
	"DROP VIEW degradation;\n"
	"CREATE VIEW degradation AS\n"
	"  SELECT t.name AS target, c.number AS cycle, i.number AS iteration,\n"
	"         i.size_bytes, i.workload, i.block_size, i.mibps_avg,\n"
	"         b.mibps_avg AS baseline_mibps, bc.number AS baseline_cycle,\n"
	"         i.mibps_avg / b.mibps_avg AS ratio, i.started_at,\n"
	"         i.id AS iteration_id, i.baseline,\n"
	"         b.number AS baseline_iteration, b.id AS baseline_iteration_id\n"
	"  FROM iterations i\n"
	"  JOIN cycles c ON c.id = i.cycle_id\n"
	"  JOIN targets t ON t.id = i.target_id\n"
	"  LEFT JOIN iterations b ON b.id = i.baseline_iteration_id\n"
	"  LEFT JOIN cycles bc ON bc.id = b.cycle_id\n"
	"  WHERE i.status = 'done';\n",
	/* Statistics that add up: every sample's real length and bytes (the
	 * final partial one included, so the samples of a phase sum to its
	 * bytes); interrupted rows lose the zeros they used to store, older
	 * rows whose min or max missed their average lose min, max and
	 * stddev (they came from samples that dropped the end of the phase),
	 * and a row stored from now on with min > avg or max < avg is refused. */
	[10] =
	"ALTER TABLE samples ADD COLUMN duration_ms REAL;\n"
	"ALTER TABLE samples ADD COLUMN bytes INTEGER;\n"
	"UPDATE iterations SET mibps_avg = NULL, mibps_min = NULL, mibps_max = NULL,\n"
	"  mibps_stddev = NULL, iops_avg = NULL, lat_mean_us = NULL, lat_p50_us = NULL,\n"
	"  lat_p90_us = NULL, lat_p99_us = NULL, lat_p999_us = NULL,\n"
	"  lat_p9999_us = NULL, lat_max_us = NULL WHERE status = 'interrupted';\n"
	/* min and max from samples that missed the end of the phase: the
	 * phase's true extremes are unknown */
	"UPDATE iterations SET mibps_min = NULL, mibps_max = NULL, mibps_stddev = NULL\n"
	"  WHERE mibps_min > mibps_avg OR mibps_max < mibps_avg;\n"
	/* a size without min/max (too short) counts with its average, so the
	 * cycle's min <= avg <= max holds too */
	"DROP VIEW cycle_summary;\n"
	"CREATE VIEW cycle_summary AS\n"
	"  SELECT t.name AS target, c.number AS cycle, c.started_at, c.ended_at,\n"
	"         c.status, count(i.id) AS iterations,\n"
	"         min(coalesce(i.mibps_min, i.mibps_avg)) AS mibps_min,\n"
	"         avg(i.mibps_avg) AS mibps_avg,\n"
	"         max(coalesce(i.mibps_max, i.mibps_avg)) AS mibps_max, c.action,\n"
	"         c.action_outcome, c.action_seconds, c.action_bytes, c.id AS cycle_id\n"
	"  FROM cycles c\n"
	"  JOIN targets t ON t.id = c.target_id\n"
	"  LEFT JOIN iterations i ON i.cycle_id = c.id AND i.status = 'done'\n"
	"  GROUP BY c.id;\n"
	"CREATE TRIGGER iterations_rate_bounds BEFORE UPDATE OF mibps_avg, mibps_min,\n"
	"  mibps_max ON iterations\n"
	"  WHEN NEW.mibps_min > NEW.mibps_avg OR NEW.mibps_max < NEW.mibps_avg\n"
	"    OR NEW.mibps_min > NEW.mibps_max\n"
	"  BEGIN SELECT RAISE(ABORT, 'iterations: mibps_min <= mibps_avg <= mibps_max');\n"
	"  END;\n",
	/* Mark the file as wearmon's so that a foreign SQLite database is told
	 * apart even when it has a user_version of its own. */
	[11] =
	"PRAGMA application_id = 1464814926;\n",
	/* The plan of the target as configured, so that `wearmon status` counts
	 * sizes and cycles from the configuration rather than from the rows so
	 * far, and the time spent in the phase against its duration. */
	[12] =
	"ALTER TABLE progress ADD COLUMN nsizes INTEGER;\n"
	"ALTER TABLE progress ADD COLUMN cycles INTEGER;\n"
	"ALTER TABLE progress ADD COLUMN phase_seconds REAL;\n"
	"ALTER TABLE progress ADD COLUMN duration_seconds REAL;\n",
	/* What a run was started with, for a report that states its test
	 * conditions: the resolved configuration text and the kernel. */
	[13] =
	"ALTER TABLE runs ADD COLUMN config TEXT;\n"
	"ALTER TABLE runs ADD COLUMN kernel TEXT;\n"
	"ALTER TABLE cycles ADD COLUMN campaign_first_cycle INTEGER;\n"
	"UPDATE cycles SET campaign_first_cycle = (SELECT t.campaign_first_cycle\n"
	"  FROM targets t WHERE t.id = cycles.target_id\n"
	"  AND cycles.number >= t.campaign_first_cycle);\n",
	/* One definition of an iteration's baseline (ITERATION_BASELINE_14),
	 * which the degradation view now reads as the CLI does. */
	[14] =
	"CREATE VIEW iteration_baseline AS\n"
	ITERATION_BASELINE_14 ";\n"
	"DROP VIEW degradation;\n"
	"CREATE VIEW degradation AS\n"
	"  SELECT t.name AS target, c.number AS cycle, i.number AS iteration,\n"
	"         i.size_bytes, i.workload, i.block_size, i.mibps_avg,\n"
	"         b.baseline_mibps, b.baseline_cycle,\n"
	"         i.mibps_avg / b.baseline_mibps AS ratio, i.started_at,\n"
	"         i.id AS iteration_id, i.baseline,\n"
	"         b.baseline_iteration, b.baseline_iteration_id\n"
	"  FROM iterations i\n"
	"  JOIN cycles c ON c.id = i.cycle_id\n"
	"  JOIN targets t ON t.id = i.target_id\n"
	"  LEFT JOIN iteration_baseline b ON b.iteration_id = i.id\n"
	"  WHERE i.status = 'done';\n",
	/* Never the wrong file, never twice: the files wearmon created as
	 * targets (by device and inode), the identity of a file target's or a
	 * loop device's backing file, a campaign that stays complete across
	 * restarts, an action's end apart from its start, and time in which
	 * the daemon itself did not run. */
	[15] =
	"CREATE TABLE owned_files (\n"
	"  dev INTEGER NOT NULL,\n"
	"  ino INTEGER NOT NULL,\n"
	"  target TEXT NOT NULL,\n"
	"  path TEXT NOT NULL,\n"
	"  created_at TEXT NOT NULL DEFAULT (" NOW "),\n"
	"  PRIMARY KEY (dev, ino)\n"
	") WITHOUT ROWID;\n"
	"ALTER TABLE targets ADD COLUMN backing_dev INTEGER;\n"
	"ALTER TABLE targets ADD COLUMN backing_ino INTEGER;\n"
	"ALTER TABLE targets ADD COLUMN campaign_key TEXT;\n"
	"ALTER TABLE targets ADD COLUMN campaign_done_at TEXT;\n"
	"ALTER TABLE cycles ADD COLUMN action_ended_at TEXT;\n"
	"ALTER TABLE iterations ADD COLUMN host_stall_seconds REAL;\n"
	"ALTER TABLE samples ADD COLUMN host_stall_ms REAL;\n",
	/* Samples as small integer rows (sample_data) behind a view with the
	 * columns and units of before, and their per-minute rollups. The old
	 * table's rows move in batches (db_samples_migrate): until the last,
	 * the view shows both; then db_schema_samples_done drops the old
	 * table. */
	[16] =
	"CREATE TABLE sample_data (\n"
	"  iteration_id INTEGER NOT NULL REFERENCES iterations(id),\n"
	"  phase INTEGER NOT NULL CHECK (phase IN (0, 1)),\n"
	"  t_ms INTEGER NOT NULL,\n"
	"  duration_ns INTEGER,\n"
	"  bytes INTEGER,\n"
	"  ops INTEGER,\n"
	"  lat_p50_ns INTEGER,\n"
	"  lat_p90_ns INTEGER,\n"
	"  lat_p99_ns INTEGER,\n"
	"  lat_p999_ns INTEGER,\n"
	"  lat_p9999_ns INTEGER,\n"
	"  lat_max_ns INTEGER,\n"
	"  host_stall_ns INTEGER,\n"
	"  mibps_min_1s REAL,\n"
	"  mibps REAL,\n"
	"  iops REAL,\n"
	"  PRIMARY KEY (iteration_id, phase, t_ms)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE sample_minute_data (\n"
	"  iteration_id INTEGER NOT NULL REFERENCES iterations(id),\n"
	"  phase INTEGER NOT NULL CHECK (phase IN (0, 1)),\n"
	"  minute INTEGER NOT NULL,\n"
	"  samples INTEGER NOT NULL,\n"
	"  duration_ns INTEGER,\n"
	"  bytes INTEGER,\n"
	"  ops INTEGER,\n"
	"  mibps_min REAL,\n"
	"  mibps_max REAL,\n"
	"  lat_p50_ns INTEGER,\n"
	"  lat_p90_ns INTEGER,\n"
	"  lat_p99_ns INTEGER,\n"
	"  lat_p999_ns INTEGER,\n"
	"  lat_p9999_ns INTEGER,\n"
	"  lat_max_ns INTEGER,\n"
	"  host_stall_ns INTEGER,\n"
	"  mibps_avg REAL,\n"
	"  iops_avg REAL,\n"
	"  PRIMARY KEY (iteration_id, phase, minute)\n"
	") WITHOUT ROWID;\n"
	"ALTER TABLE samples RENAME TO samples_v15;\n"
	"CREATE VIEW samples AS\n"
	SAMPLES_VIEW_16 "\n"
	"  UNION ALL\n"
	SAMPLES_LEGACY_16 ";\n"
	SAMPLES_TRIGGERS_16(SAMPLES_LEGACY_DELETE_16)
	"CREATE VIEW sample_minutes AS\n"
	SAMPLE_MINUTES_VIEW_16 ";\n",
	/* The queue depth kept: the
	 * mean number of I/Os in flight that the engine measured, next to
	 * queue_depth, the one asked for. */
	[17] =
	"ALTER TABLE iterations ADD COLUMN mean_depth REAL;\n",
	/* What each iteration wrote (the union of the byte ranges its writes
	 * completed), kept until its wear row adds it to mapped_extents. */
	[18] =
	"CREATE TABLE written_extents (\n"
	"  iteration_id INTEGER NOT NULL,\n"
	"  start_byte INTEGER NOT NULL,\n"
	"  end_byte INTEGER NOT NULL\n"
	");\n"
	"CREATE INDEX written_extents_iteration ON written_extents (iteration_id);\n",
	/* Status from the plan and a monotonic clock: the sizes and cycles
	 * a cycle was started with, so that "size 2 of 3" holds mid-cycle and
	 * in a merged copy; the iteration's running time as the daemon's
	 * monotonic clock measures it, which a wall-clock jump leaves alone. */
	[19] =
	"ALTER TABLE cycles ADD COLUMN nsizes INTEGER;\n"
	"ALTER TABLE cycles ADD COLUMN cycles_planned INTEGER;\n"
	"ALTER TABLE progress ADD COLUMN iteration_seconds REAL;\n",
	/* The drive's own evidence over each iteration (common/device/devpoll.h):
	 * its host and media writes, their ratio, the highest temperature polled,
	 * throttle seconds, media errors, the spare left. */
	[20] =
	"ALTER TABLE iterations ADD COLUMN device_host_bytes INTEGER;\n"
	"ALTER TABLE iterations ADD COLUMN device_media_bytes INTEGER;\n"
	"ALTER TABLE iterations ADD COLUMN device_wa REAL;\n"
	"ALTER TABLE iterations ADD COLUMN device_peak_temp_c INTEGER;\n"
	"ALTER TABLE iterations ADD COLUMN device_throttle_seconds INTEGER;\n"
	"ALTER TABLE iterations ADD COLUMN device_media_errors INTEGER;\n"
	"ALTER TABLE iterations ADD COLUMN device_spare_pct INTEGER;\n",
	/* Reads that do not grow with the whole history: each cycle stores
	 * its figures (DB_CYCLE_STORE_SQL, the definition cycle_summary,
	 * the report and the cycles chart share) and each done iteration its
	 * ratio to baseline, kept by triggers in the transaction that writes
	 * the iteration (the daemon's end of an iteration, a merge, scalegen);
	 * degradation reads the stored ratio, which an index orders. */
	[21] =
	"ALTER TABLE iterations ADD COLUMN ratio REAL;\n"
	"ALTER TABLE cycles ADD COLUMN done_iterations INTEGER;\n"
	"ALTER TABLE cycles ADD COLUMN sizes INTEGER;\n"
	"ALTER TABLE cycles ADD COLUMN mibps_min REAL;\n"
	"ALTER TABLE cycles ADD COLUMN mibps_avg REAL;\n"
	"ALTER TABLE cycles ADD COLUMN mibps_max REAL;\n"
	"ALTER TABLE cycles ADD COLUMN fill_mibps_avg REAL;\n"
	"ALTER TABLE cycles ADD COLUMN ratio_avg REAL;\n"
	"UPDATE iterations SET ratio = " DB_ITERATION_RATIO_SQL("iterations") ";\n"
	DB_CYCLE_STORE_SQL("cycles.id") ";\n"
	"CREATE INDEX iterations_ratio ON iterations (ratio) WHERE ratio IS NOT NULL;\n"
	"CREATE TRIGGER iterations_figures_insert AFTER INSERT ON iterations\n"
	"  BEGIN UPDATE iterations SET ratio = " DB_ITERATION_RATIO_SQL("NEW")
	" WHERE id = NEW.id;\n"
	"  " DB_CYCLE_STORE_SQL("NEW.cycle_id") ";\n"
	"  END;\n"
	"CREATE TRIGGER iterations_figures_update AFTER UPDATE OF status, phase,\n"
	"  mibps_avg, mibps_min, mibps_max, baseline_iteration_id ON iterations\n"
	"  BEGIN UPDATE iterations SET ratio = " DB_ITERATION_RATIO_SQL("NEW")
	" WHERE id = NEW.id;\n"
	"  " DB_CYCLE_STORE_SQL("NEW.cycle_id") ";\n"
	"  END;\n"
	"DROP VIEW degradation;\n"
	"CREATE VIEW degradation AS\n"
	"  SELECT t.name AS target, c.number AS cycle, i.number AS iteration,\n"
	"         i.size_bytes, i.workload, i.block_size, i.mibps_avg,\n"
	"         b.mibps_avg AS baseline_mibps, bc.number AS baseline_cycle,\n"
	"         i.ratio, i.started_at, i.id AS iteration_id, i.baseline,\n"
	"         b.number AS baseline_iteration, b.id AS baseline_iteration_id,\n"
	"         i.cycle_id\n"
	"  FROM iterations i\n"
	"  JOIN cycles c ON c.id = i.cycle_id\n"
	"  JOIN targets t ON t.id = i.target_id\n"
	"  LEFT JOIN iterations b ON b.id = i.baseline_iteration_id\n"
	"  LEFT JOIN cycles bc ON bc.id = b.cycle_id\n"
	"  WHERE i.status = 'done';\n",
	/* Host idle recovery (hir = yes, daemon/hir.c): every precondition
	 * round, burst and return to baseline with its rate and the drive's
	 * own counters over it; the steady verdict on the last round. */
	[22] =
	"CREATE TABLE hir_bursts (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  cycle_id INTEGER NOT NULL REFERENCES cycles(id),\n"
	"  target_id INTEGER NOT NULL REFERENCES targets(id),\n"
	"  run_id INTEGER REFERENCES runs(id),\n"
	"  kind TEXT NOT NULL CHECK (kind IN ('precondition', 'burst', 'baseline')),\n"
	"  wait_state INTEGER NOT NULL,\n"
	"  wait_seconds REAL,\n"
	"  idle_seconds REAL,\n"
	"  repetition INTEGER NOT NULL,\n"
	"  started_at TEXT NOT NULL,\n"
	"  seconds REAL NOT NULL,\n"
	"  bytes INTEGER NOT NULL,\n"
	"  ops INTEGER NOT NULL,\n"
	"  mibps REAL,\n"
	"  iops REAL,\n"
	"  lat_mean_us REAL,\n"
	"  lat_p99_us REAL,\n"
	"  device_host_bytes INTEGER,\n"
	"  device_media_bytes INTEGER,\n"
	"  device_wa REAL,\n"
	"  device_peak_temp_c INTEGER,\n"
	"  steady INTEGER\n"
	");\n"
	"CREATE INDEX hir_bursts_cycle ON hir_bursts (cycle_id, kind, wait_state);\n"
	"CREATE INDEX hir_bursts_target ON hir_bursts (target_id, cycle_id);\n",
	/* Host idle recovery writes count where every other write counts
	 * (device/wear.h: wear_after_hir): each row's wear figures, as a wear
	 * row has them; NULL until its writes are in the target's counters
	 * and mapped extents. */
	[23] =
	"ALTER TABLE hir_bursts ADD COLUMN mapped_bytes INTEGER;\n"
	"ALTER TABLE hir_bursts ADD COLUMN op_effective REAL;\n"
	"ALTER TABLE hir_bursts ADD COLUMN host_bytes_since_erase INTEGER;\n"
	"ALTER TABLE hir_bursts ADD COLUMN host_bytes_total INTEGER;\n"
	/* where a phase of several stages is (host idle recovery: its
	 * precondition round, wait state and repetition, or baseline) and the
	 * seconds its plan has left, for wearmon status */
	"ALTER TABLE progress ADD COLUMN stage TEXT;\n"
	"ALTER TABLE progress ADD COLUMN remaining_seconds REAL;\n",
	/* Filesystem mode: the filesystems wearmon made, by UUID, so that a
	 * restart that finds one on its device does not report it as a
	 * foreign signature being overwritten. */
	[24] =
	"CREATE TABLE made_filesystems (\n"
	"  target_id INTEGER NOT NULL REFERENCES targets(id),\n"
	"  uuid TEXT NOT NULL,\n"
	"  type TEXT NOT NULL,\n"
	"  device TEXT NOT NULL,\n"
	"  made_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),\n"
	"  PRIMARY KEY (target_id, uuid)\n"
	");\n",
	/* The cause judged from the dip: the drive's counters read every
	 * device_poll_interval and at phase edges during an iteration, as
	 * counters since its first reading (common/db/db_series.c); the
	 * throttle time at the source's resolution; whether the latency
	 * figures include a host stall. */
	[25] =
	"CREATE TABLE device_series (\n"
	"  iteration_id INTEGER NOT NULL REFERENCES iterations(id),\n"
	"  phase INTEGER NOT NULL CHECK (phase IN (0, 1)),\n"
	"  t_ms INTEGER NOT NULL,\n"
	"  host_bytes INTEGER,\n"
	"  media_bytes INTEGER,\n"
	"  temp_c INTEGER,\n"
	"  throttle_ms INTEGER,\n"
	"  host_stall_ms INTEGER,\n"
	"  PRIMARY KEY (iteration_id, phase, t_ms)\n"
	") WITHOUT ROWID;\n"
	"ALTER TABLE iterations ADD COLUMN device_throttle_ms INTEGER;\n"
	"ALTER TABLE iterations ADD COLUMN device_throttle_res_ms INTEGER;\n"
	"ALTER TABLE iterations ADD COLUMN lat_host_stall INTEGER;\n",
	/* Every command wearmond starts (secure_erase_command, mkfs,
	 * alert_command; base/cmd.h), recorded before it execs with who it
	 * is (pid, session, start time, boot): the next start finds one an
	 * earlier run left running and ends it before any action, so that no
	 * two run at once; their times show that none did. */
	[26] =
	"CREATE TABLE commands (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(id),\n"
	"  target_id INTEGER REFERENCES targets(id),\n"
	"  tag TEXT NOT NULL,\n"
	"  argv TEXT NOT NULL,\n"
	"  pid INTEGER NOT NULL,\n"
	"  session_id INTEGER NOT NULL,\n"
	"  start_ticks INTEGER NOT NULL,\n"
	"  boot_id TEXT NOT NULL,\n"
	"  started_at TEXT NOT NULL DEFAULT (" NOW "),\n"
	"  ended_at TEXT,\n"
	"  ended_how TEXT CHECK (ended_how IN ('exited', 'signaled', 'timed out',\n"
	"    'stopped', 'not run', 'ended at start', 'gone at start')),\n"
	"  status INTEGER,\n"
	"  ended_by_run_id INTEGER REFERENCES runs(id)\n"
	");\n"
	"CREATE INDEX commands_open ON commands (id) WHERE ended_at IS NULL;\n"
	"CREATE INDEX commands_target ON commands (target_id, started_at);\n",
	/* Host idle recovery as the SNIA PTS writes it (daemon/hir.c): the
	 * purge before the precondition, one row per attempt (which method
	 * ran, or that none could and why), and the idle wait that follows
	 * each burst with the drive's own counters over it: its media writes
	 * while the host is idle are its background garbage collection. */
	[27] =
	"CREATE TABLE hir_purges (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  cycle_id INTEGER NOT NULL REFERENCES cycles(id),\n"
	"  target_id INTEGER NOT NULL REFERENCES targets(id),\n"
	"  run_id INTEGER REFERENCES runs(id),\n"
	"  method TEXT NOT NULL CHECK (method IN ('secure-erase', 'trim', 'none')),\n"
	"  erase TEXT,\n"
	"  outcome TEXT NOT NULL,\n"
	"  started_at TEXT NOT NULL,\n"
	"  seconds REAL NOT NULL,\n"
	"  bytes INTEGER NOT NULL,\n"
	"  note TEXT\n"
	");\n"
	"CREATE INDEX hir_purges_target ON hir_purges (target_id, cycle_id);\n"
	"ALTER TABLE hir_bursts ADD COLUMN idle_after_seconds REAL;\n"
	"ALTER TABLE hir_bursts ADD COLUMN idle_host_bytes INTEGER;\n"
	"ALTER TABLE hir_bursts ADD COLUMN idle_media_bytes INTEGER;\n",
	/* The PTS tests as presets (daemon/pts.c): each cell of a test is an
	 * iteration row that says its test, round and cell; the rows that
	 * end a test's rounds carry its steady-state verdict, latency rows
	 * their five-nines, the demand-intensity points their response-time
	 * histogram. */
	[28] =
	"ALTER TABLE iterations ADD COLUMN pts_test TEXT;\n"
	"ALTER TABLE iterations ADD COLUMN pts_variant TEXT;\n"
	"ALTER TABLE iterations ADD COLUMN pts_round INTEGER;\n"
	"ALTER TABLE iterations ADD COLUMN pts_cell INTEGER;\n"
	"ALTER TABLE iterations ADD COLUMN pts_part TEXT;\n"
	"ALTER TABLE iterations ADD COLUMN pts_active_pct REAL;\n"
	"ALTER TABLE iterations ADD COLUMN pts_tracking INTEGER;\n"
	"ALTER TABLE iterations ADD COLUMN lat_p99999_us REAL;\n"
	"ALTER TABLE iterations ADD COLUMN pts_ss_reached INTEGER;\n"
	"ALTER TABLE iterations ADD COLUMN pts_ss_first_round INTEGER;\n"
	"ALTER TABLE iterations ADD COLUMN pts_ss_mean REAL;\n"
	"ALTER TABLE iterations ADD COLUMN pts_ss_range_pct REAL;\n"
	"ALTER TABLE iterations ADD COLUMN pts_ss_slope REAL;\n"
	"ALTER TABLE iterations ADD COLUMN pts_ss_excursion_pct REAL;\n"
	"ALTER TABLE iterations ADD COLUMN pts_lat_hist TEXT;\n"
	"CREATE INDEX iterations_pts ON iterations (target_id, pts_test, cycle_id)\n"
	"  WHERE pts_test IS NOT NULL;\n",
	/* The rated endurance of the drive as the configuration gives it
	 * (rated_tbw, rated_dwpd, warranty_years, warranty_start): what the
	 * endurance forecast of the CLI, the report and the metrics compares
	 * with, stored because the CLI reads no configuration. */
	[29] =
	"ALTER TABLE targets ADD COLUMN rated_tbw INTEGER;\n"
	"ALTER TABLE targets ADD COLUMN rated_dwpd REAL;\n"
	"ALTER TABLE targets ADD COLUMN warranty_years REAL;\n"
	"ALTER TABLE targets ADD COLUMN warranty_start TEXT;\n"
	/* The snapshots on either side of each change of the wear indicator
	 * (and a target's first): all the forecast needs of a campaign, at
	 * most two per level, so that status and the metrics read a bounded
	 * number of rows however long the campaign. Kept by a trigger, filled
	 * here for the rows there are. */
	"ALTER TABLE health ADD COLUMN level_edge INTEGER;\n"
	"UPDATE health SET level_edge = 1 WHERE percentage_used IS NOT NULL AND (\n"
	"  coalesce((SELECT p.percentage_used FROM health p\n"
	"    WHERE p.target_id = health.target_id AND p.percentage_used IS NOT NULL\n"
	"    AND (p.at < health.at OR (p.at = health.at AND p.id < health.id))\n"
	"    ORDER BY p.at DESC, p.id DESC LIMIT 1), -1) <> percentage_used\n"
	"  OR coalesce((SELECT n.percentage_used FROM health n\n"
	"    WHERE n.target_id = health.target_id AND n.percentage_used IS NOT NULL\n"
	"    AND (n.at > health.at OR (n.at = health.at AND n.id > health.id))\n"
	"    ORDER BY n.at, n.id LIMIT 1), percentage_used) <> percentage_used);\n"
	"CREATE TRIGGER health_level_edge AFTER INSERT ON health\n"
	"  WHEN NEW.percentage_used IS NOT NULL\n"
	"  BEGIN UPDATE health SET level_edge = 1 WHERE id IN (NEW.id,\n"
	"    (SELECT p.id FROM health p WHERE p.target_id = NEW.target_id\n"
	"     AND p.id <> NEW.id AND p.percentage_used IS NOT NULL AND p.at <= NEW.at\n"
	"     ORDER BY p.at DESC, p.id DESC LIMIT 1))\n"
	"  AND coalesce((SELECT p.percentage_used FROM health p\n"
	"    WHERE p.target_id = NEW.target_id AND p.id <> NEW.id\n"
	"    AND p.percentage_used IS NOT NULL AND p.at <= NEW.at\n"
	"    ORDER BY p.at DESC, p.id DESC LIMIT 1), -1) <> NEW.percentage_used;\n"
	"  END;\n"
	"CREATE INDEX health_level_edges ON health (target_id, at) WHERE level_edge = 1;\n",
};
/* clang-format on */

_Static_assert(sizeof(db_migrations) / sizeof(db_migrations[0]) == DB_SCHEMA_VERSION + 1,
	       "one migration script per schema version");
