/* act: actions between cycles (TRIM, ...), each a row of a const table.
 * Runs only on an open target after the I/O queue is drained; never opens a
 * device itself. */
#ifndef WEARMON_ACT_H
#define WEARMON_ACT_H

#include <stdatomic.h>
#include <stdint.h>

#include "config/cfg.h"
#include "config/names.h"
#include "device/tgt.h"

/* What an action did. */
struct act_result {
	char started_at[32];
	double seconds;
	uint64_t bytes; /* bytes affected (fitrim: trimmed) */
	uint64_t freed; /* fitrim: the test file's bytes freed first */
	enum act_outcome outcome;
	char error[512]; /* empty when none */
};

/* What an action works on. */
struct act_env {
	struct tgt *tg; /* fd may be closed and reopened (command) */
	const struct cfg_target *t;
	uint64_t region_offset, region_size;
	const char *mountpoint; /* filesystem mode, for fitrim; else NULL */
	const char *test_file;  /* filesystem mode: the test file, emptied
					   before fitrim so its blocks are trimmed */
	const atomic_int *stop; /* nonzero: end the action early */
	double command_timeout; /* seconds an external command may run; <= 0: none */
};

/* What an action did to the drive's mapped state. */
enum act_effect { EFFECT_NONE, EFFECT_TRIMMED, EFFECT_ERASED };

/* Effect of a successful action (the range for EFFECT_TRIMMED). */
enum act_effect act_effect(enum cfg_action a, const struct act_env *env, uint64_t *start,
			   uint64_t *end);

/* Run the configured between-cycles action. Returns 0 when the action ran
 * to an outcome (see r->outcome: unsupported and interrupted included),
 * -errno when it failed (r->error says why). */
int act_run(enum cfg_action a, const struct act_env *env, struct act_result *r);

/* The tag the commands table records secure_erase_command under for
 * target (len bytes; 160 hold any target's name). */
void act_erase_command_tag(const char *target, char *tag, size_t len);

/* Discard [offset, offset+len) of a target in pieces aligned to the
 * discard granularity (hole punching for regular files), sized from the
 * measured discard rate so each takes well under a second, with the stop
 * flag checked between pieces. Returns 0, -EINTR when stopped,
 * -EOPNOTSUPP when the device cannot discard, or -errno. *done = bytes. */
int act_discard(const struct tgt *tg, uint64_t offset, uint64_t len, const atomic_int *stop,
		uint64_t *done);

/* Aligned discard range: start rounded up and end down to granularity.
 * Returns 0, or -EINVAL when nothing aligned remains. */
int act_align_range(uint64_t offset, uint64_t len, uint64_t granularity, uint64_t *out_off,
		    uint64_t *out_len);

#endif
