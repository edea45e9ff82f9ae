/* Tests for act: outcomes as an enum with one name table; a stop during
 * idle, TRIM (hole punching on a regular file) or the erase command ends
 * the action as interrupted, not failed; the erase command's failures and
 * its time limit. */
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device/act.h"
#include "device/scsi.h"
#include "base/util.h"

#define FILE_BYTES (8 * MIB)

struct fx {
	char dir[64], file[96], script[96];
	struct cfg_target t;
	struct tgt tg;
	atomic_int stop;
	struct act_env env;
};

/* A regular-file target, fully written (allocated). */
static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char block[65536];
	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/wearmon-test-act.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->file, sizeof(f->file), "%s/disk", f->dir);
	snprintf(f->script, sizeof(f->script), "%s/erase.sh", f->dir);
	f->tg.fd = open(f->file, O_RDWR | O_CREAT, 0600);
	assert_true(f->tg.fd >= 0);
	memset(block, 0xa5, sizeof(block));
	for (uint64_t off = 0; off < FILE_BYTES; off += sizeof(block))
		assert_int_equal(pwrite(f->tg.fd, block, sizeof(block), (off_t)off), sizeof(block));
	snprintf(f->tg.path, sizeof(f->tg.path), "%s", f->file);
	snprintf(f->tg.real_path, sizeof(f->tg.real_path), "%s", f->file);
	f->tg.capacity = FILE_BYTES;
	f->tg.discard_granularity = 4096;
	snprintf(f->t.name, sizeof(f->t.name), "unit");
	f->env = (struct act_env){ .tg = &f->tg,
				   .t = &f->t,
				   .region_size = FILE_BYTES,
				   .stop = &f->stop,
				   .command_timeout = 10 };
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];
	tgt_close(&f->tg);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static void test_discard_alignment(void **state)
{
	static const struct {
		uint64_t off, len, gran, want_off, want_len;
		int ret;
	} cases[] = {
		{ 0, 1 << 20, 4096, 0, 1 << 20, 0 },
		{ 100, 8192, 4096, 4096, 4096, 0 },  /* start rounded up, end down */
		{ 4096, 4095, 4096, 0, 0, -EINVAL }, /* nothing aligned inside */
		{ 1 << 20, 3 << 20, 1 << 20, 1 << 20, 3 << 20, 0 },
		{ 512, 1024, 0, 512, 1024, 0 }, /* granularity 0: sectors */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t o = 0, l = 0;
		int ret = act_align_range(cases[i].off, cases[i].len, cases[i].gran, &o, &l);
		assert_int_equal(ret, cases[i].ret);
		if (!ret) {
			assert_int_equal(o, cases[i].want_off);
			assert_int_equal(l, cases[i].want_len);
		}
	}
}

static void test_outcome_names(void **state)
{
	assert_string_equal(act_outcome_name(ACT_OUT_OK), "ok");
	assert_string_equal(act_outcome_name(ACT_OUT_UNSUPPORTED), "unsupported");
	assert_string_equal(act_outcome_name(ACT_OUT_FAILED), "failed");
	assert_string_equal(act_outcome_name(ACT_OUT_SKIPPED), "skipped");
	assert_string_equal(act_outcome_name(ACT_OUT_INTERRUPTED), "interrupted");
	assert_string_equal(act_outcome_name(ACT_OUT__COUNT), "?");
}

static void test_idle_stopped_is_interrupted(void **state)
{
	struct fx *f = *state;
	struct act_result r;
	f->t.idle = 60;
	atomic_store(&f->stop, 1);
	assert_int_equal(act_run(ACT_IDLE, &f->env, &r), 0);
	assert_int_equal(r.outcome, ACT_OUT_INTERRUPTED);
	assert_true(r.seconds < 1);
	atomic_store(&f->stop, 0);
	f->t.idle = 0.05;
	assert_int_equal(act_run(ACT_IDLE, &f->env, &r), 0);
	assert_int_equal(r.outcome, ACT_OUT_OK);
}

static uint64_t allocated(const struct fx *f)
{
	struct stat st;
	assert_int_equal(fstat(f->tg.fd, &st), 0);
	return (uint64_t)st.st_blocks * 512;
}

static void test_trim_in_pieces_and_stopped(void **state)
{
	struct fx *f = *state;
	struct act_result r;
	atomic_store(&f->stop, 1);
	assert_int_equal(act_run(ACT_TRIM, &f->env, &r), 0);
	assert_int_equal(r.outcome, ACT_OUT_INTERRUPTED);
	assert_string_equal(r.error, "");
	assert_true(allocated(f) >= FILE_BYTES); /* nothing discarded */
	atomic_store(&f->stop, 0);
	assert_int_equal(act_run(ACT_TRIM, &f->env, &r), 0);
	assert_int_equal(r.outcome, ACT_OUT_OK);
	assert_int_equal(r.bytes, FILE_BYTES);
	assert_true(allocated(f) < MIB);
}

static void write_script(const struct fx *f, const char *body)
{
	FILE *s = fopen(f->script, "w");
	assert_non_null(s);
	fprintf(s, "#!/bin/sh\n%s\n", body);
	fclose(s);
	assert_int_equal(chmod(f->script, 0700), 0);
}

static int erase(struct fx *f, struct act_result *r)
{
	f->t.secure_erase = ERASE_COMMAND;
	snprintf(f->t.secure_erase_command, sizeof(f->t.secure_erase_command), "%s", f->script);
	return act_run(ACT_SECURE_ERASE, &f->env, r);
}

static void test_erase_command_outcomes(void **state)
{
	struct fx *f = *state;
	struct act_result r;
	write_script(f, "echo erasing \"$1\"");
	assert_int_equal(erase(f, &r), 0);
	assert_int_equal(r.outcome, ACT_OUT_OK);
	assert_int_equal(r.bytes, FILE_BYTES);
	write_script(f, "echo no such drive >&2; exit 4");
	assert_int_equal(erase(f, &r), -EIO);
	assert_int_equal(r.outcome, ACT_OUT_FAILED);
	assert_non_null(strstr(r.error, "exited with status 4: no such drive"));
	write_script(f, "sleep 30");
	f->env.command_timeout = 0.3;
	assert_int_equal(erase(f, &r), -EIO);
	assert_int_equal(r.outcome, ACT_OUT_FAILED);
	assert_non_null(strstr(r.error, "timed out after"));
	assert_true(r.seconds < 5);
	atomic_store(&f->stop, 1);
	f->env.command_timeout = 0;
	assert_int_equal(erase(f, &r), 0);
	assert_int_equal(r.outcome, ACT_OUT_INTERRUPTED);
	assert_true(r.seconds < 3);
}

static int no_sgio(int fd, struct sg_io_hdr *h)
{
	(void)fd;
	(void)h;
	fail_msg("a SCSI command was sent to a target that does not speak SCSI");
	return -EIO;
}

/* A SCSI erase chosen (by a reload) for a target that answered as ATA:
 * nothing is sent, the outcome says why. */
static void test_scsi_erase_of_a_non_scsi_target(void **state)
{
	struct fx *f = *state;
	struct act_result r;
	f->tg.proto = TGT_PROTO_ATA;
	f->t.secure_erase = ERASE_SCSI_FORMAT;
	scsi_sgio_fn = no_sgio;
	assert_int_equal(act_run(ACT_SECURE_ERASE, &f->env, &r), 0);
	scsi_sgio_fn = scsi_sgio_ioctl;
	assert_int_equal(r.outcome, ACT_OUT_UNSUPPORTED);
	assert_int_equal(r.bytes, 0);
	assert_non_null(strstr(r.error, "secure_erase = scsi-format: "));
	assert_non_null(strstr(r.error, "does not speak SCSI natively"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_discard_alignment),
		cmocka_unit_test(test_outcome_names),
		cmocka_unit_test_setup_teardown(test_idle_stopped_is_interrupted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trim_in_pieces_and_stopped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_erase_command_outcomes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scsi_erase_of_a_non_scsi_target, setup,
						teardown),
	};

	return cmocka_run_group_tests_name("act", tests, NULL, NULL);
}
