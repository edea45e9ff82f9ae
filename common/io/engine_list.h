/* engine_list: every I/O engine wearmond can run, one line each, in the
 * order ioengine = auto prefers them; the enum the config stores and the
 * names the ioengine key takes follow from this one list. Adding an engine
 * is its file under common/io (an engine_ops table, engine_ops.h) and one
 * line here. Knows nothing of how an engine works. */
#ifndef WEARMON_ENGINE_LIST_H
#define WEARMON_ENGINE_LIST_H

/* X(ID, "name", ops table): ENGINE_ID, its ioengine name, its table. */
#define ENGINE_LIST(X)                                                                             \
	X(IO_URING, "io_uring", engine_io_uring_ops)                                               \
	X(LIBAIO, "libaio", engine_libaio_ops)                                                     \
	X(SYNC, "sync", engine_sync_ops)                                                           \
	X(NULL, "null", engine_null_ops)

#define ENGINE_KIND_(id, name, ops) ENGINE_##id,
/* ioengine's values: auto (engine_auto chooses), then one per engine. */
enum engine_kind { ENGINE_AUTO, ENGINE_LIST(ENGINE_KIND_) ENGINE__COUNT };
#undef ENGINE_KIND_

/* The names by kind ("auto" first), NULL-terminated: the ioengine key's
 * choices. */
extern const char *const engine_kind_names[];

/* The name of k ("?" when out of range). */
const char *engine_kind_name(enum engine_kind k);

/* k as a campaign key stores it: what the drive sees, not the path the
 * I/Os take. The queued engines (auto, io_uring, libaio) send the drive
 * the same I/Os at the same depth and are one value, "libaio", the name
 * older versions stored for the default; sync and null are their own.
 * Returns a name of engine_kind_names. */
const char *engine_kind_campaign(enum engine_kind k);

/* Whether engine k reads and writes the device (auto: whichever it
 * chooses does; the null engine does not). Returns 1 or 0. */
int engine_kind_moves_data(enum engine_kind k);

#endif
