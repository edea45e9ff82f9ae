/* names: enum values as text, as written in the config file and stored in
 * the database. Only tables and lookups: no call into another module. */
#include "config/names.h"

#include <stddef.h>

#define COUNT_OF(a) ((int)(sizeof(a) / sizeof((a)[0])) - 1) /* less the NULL */

const char *const cfg_workload_names[] = {
	[WL_SEQWRITE] = "seqwrite",
	[WL_SEQREAD] = "seqread",
	[WL_RANDWRITE] = "randwrite",
	[WL_RANDREAD] = "randread",
	[WL_REWRITE] = "rewrite",
	[WL_BACKREAD] = "backread",
	[WL_STRIDEREAD] = "strideread",
	[WL_RANDRW] = "randrw",
	[WL_SEQRW] = "seqrw",
	[WL_DATABASE] = "database",
	[WL_FILESERVER] = "fileserver",
	[WL_WEBSERVER] = "webserver",
	[WL_WORKSTATION] = "workstation",
	[WL_STREAMING] = "streaming",
	[WL_JESD219] = "jesd219",
	[WL__COUNT] = NULL,
};
const char *const cfg_action_names[] = {
	[ACT_NONE] = "none",     [ACT_TRIM] = "trim",
	[ACT_FITRIM] = "fitrim", [ACT_SECURE_ERASE] = "secure-erase",
	[ACT_IDLE] = "idle",     [ACT__COUNT] = NULL,
};
const char *const cfg_verify_names[] = {
	[VERIFY_NONE] = "none",
	[VERIFY_CRC32C] = "crc32c",
	NULL,
};
const char *const cfg_baseline_names[] = {
	[BASELINE_FIRST] = "first",
	[BASELINE_BEST] = "best",
	[BASELINE_PREVIOUS] = "previous",
	[BASELINE__COUNT] = NULL,
};
const char *const cfg_pts_names[] = {
	[PTS_IOPS] = "iops",       [PTS_THROUGHPUT] = "throughput",
	[PTS_LATENCY] = "latency", [PTS_WSAT] = "wsat",
	[PTS_HIR] = "hir",         [PTS_XSR] = "xsr",
	[PTS_DIRTH] = "dirth",     [PTS__COUNT] = NULL,
};
const char *const cfg_pts_variant_names[] = {
	[PTS_ENTERPRISE] = "enterprise",
	[PTS_CLIENT] = "client",
	[PTS_VARIANT__COUNT] = NULL,
};

static const char *const outcome_names[ACT_OUT__COUNT] = {
	[ACT_OUT_OK] = "ok",
	[ACT_OUT_UNSUPPORTED] = "unsupported",
	[ACT_OUT_FAILED] = "failed",
	[ACT_OUT_SKIPPED] = "skipped",
	[ACT_OUT_INTERRUPTED] = "interrupted",
};

static const char *choice_name(const char *const *names, int n, int v)
{
	return v >= 0 && v < n ? names[v] : "unknown";
}

const char *cfg_workload_name(enum cfg_workload w)
{
	return choice_name(cfg_workload_names, WL__COUNT, (int)w);
}

const char *cfg_action_name(enum cfg_action a)
{
	return choice_name(cfg_action_names, ACT__COUNT, (int)a);
}

const char *cfg_verify_name(enum cfg_verify v)
{
	return choice_name(cfg_verify_names, COUNT_OF(cfg_verify_names), (int)v);
}

const char *cfg_baseline_name(enum cfg_baseline b)
{
	return choice_name(cfg_baseline_names, BASELINE__COUNT, (int)b);
}

const char *cfg_pts_name(enum cfg_pts p)
{
	return choice_name(cfg_pts_names, PTS__COUNT, (int)p);
}

const char *cfg_pts_variant_name(enum cfg_pts_variant v)
{
	return choice_name(cfg_pts_variant_names, PTS_VARIANT__COUNT, (int)v);
}

const char *act_outcome_name(enum act_outcome o)
{
	return (unsigned)o < ACT_OUT__COUNT ? outcome_names[o] : "?";
}

const char *tgt_kind_name(enum tgt_kind k)
{
	switch (k) {
	case TGT_BLOCK: return "block";
	case TGT_FILE: return "file";
	}
	return "?";
}
