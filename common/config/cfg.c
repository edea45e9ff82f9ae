/* cfg: reading the configuration file (inih) into struct cfg: sections,
 * entries, [wearmon] defaults, every error with its FILE:LINE. The key
 * table lives in cfg_keys.c, resolution against a device in cfg_resolve.c. */
#include "config/cfg_int.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "io/workload.h"

#define FILE_MAX (1 << 20)

/* Make room for one more element in an array of *cap. Returns the array
 * (moved perhaps) or NULL, leaving the old one intact, when out of memory. */
static void *grow(void *v, int n, int *cap, size_t elem)
{
	int ncap;
	void *nv;

	if (n < *cap)
		return v;
	ncap = *cap ? *cap * 2 : 16;
	nv = realloc(v, (size_t)ncap * elem);
	if (nv)
		*cap = ncap;
	return nv;
}

/* ---- error list ---- */

/* Adds "FILE:LINE: WHAT: message", "FILE:LINE: message" (what NULL) or
 * "FILE: message" (line 0). */
void cfg_err_add(struct errs *e, int line, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

void cfg_err_add(struct errs *e, int line, const char *what, const char *fmt, ...)
{
	char msg[MSG_MAX], *text;
	struct errline *v;
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line > 0)
		n = asprintf(&text, "%s:%d: %s%s%s", e->file, line, what ? what : "",
			     what ? ": " : "", msg);
	else
		n = asprintf(&text, "%s: %s", e->file, msg);
	if (n < 0) {
		e->oom = 1;
		return;
	}
	v = grow(e->v, e->n, &e->cap, sizeof(*e->v));
	if (!v) {
		free(text);
		e->oom = 1;
		return;
	}
	e->v = v;
	e->v[e->n] = (struct errline){ line, e->n, text };
	e->n++;
}

/* Whether an error was already reported on line. */
int cfg_errs_at(const struct errs *e, int line)
{
	for (int i = 0; i < e->n; i++)
		if (e->v[i].line == line)
			return 1;
	return 0;
}

static int errline_cmp(const void *a, const void *b)
{
	const struct errline *x = a, *y = b;
	unsigned lx = (unsigned)x->line - 1, ly = (unsigned)y->line - 1;

	/* Line 0 (file-level) sorts last; equal lines keep their order. */
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Sort, copy to err one per line and free. Returns 0, -EINVAL (errors)
 * or -ENOMEM. */
int cfg_errs_finish(struct errs *e, char *err, size_t errlen)
{
	size_t used = 0;
	int rc = e->oom ? -ENOMEM : e->n ? -EINVAL : 0;

	if (err && errlen)
		err[0] = '\0';
	if (e->n)
		qsort(e->v, (size_t)e->n, sizeof(*e->v), errline_cmp);
	for (int i = 0; i < e->n; i++) {
		if (err && used + 1 < errlen) {
			int w = snprintf(err + used, errlen - used, "%s%s", i ? "\n" : "",
					 e->v[i].text);
			used += w > 0 ? (size_t)w : 0;
		}
		free(e->v[i].text);
	}
	free(e->v);
	e->v = NULL;
	e->n = e->cap = 0;
	return rc;
}

/* ---- reading the file: sections and key = value entries ---- */

enum sec_kind { SEC_GLOBAL, SEC_TARGET, SEC_BAD };

#define NO_SECTION (-1)
#define BAD_HEADER (-2)

struct section {
	enum sec_kind kind;
	char label[LABEL_MAX];   /* "[target lab1]", for messages */
	char name[CFG_NAME_MAX]; /* target name */
	int line;
};

struct entry {
	int section, key, line;
	char *value;
};

struct parser {
	const char *text; /* the reader's input */
	size_t len, pos;
	int lineno;
	int expect_line;  /* a key line inih must hand to on_pair */
	int handled_line; /* last line on_pair saw */
	int cur;          /* current section, or NO_SECTION/BAD_HEADER */
	int saw_target;   /* a [target ...] header, even a bad one */
	struct section *secs;
	int nsecs, capsecs;
	struct entry *ents;
	int nents, capents;
	struct errs *e;
};

static int name_char_ok(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.';
}

/* Checks a target name n and copies it to s->name. Returns 0, or -EINVAL
 * with an error added. */
static int set_target_name(struct parser *p, struct section *s, const char *n)
{
	if (!*n) {
		cfg_err_add(p->e, s->line, s->label, "missing target name (use [target NAME])");
		return -EINVAL;
	}
	if (strlen(n) >= CFG_NAME_MAX) {
		cfg_err_add(p->e, s->line, s->label, "target name is longer than %d characters",
			    CFG_NAME_MAX - 1);
		return -EINVAL;
	}
	for (const char *c = n; *c; c++) {
		if (!name_char_ok(*c)) {
			cfg_err_add(p->e, s->line, s->label,
				    "target name \"%s\" may only hold "
				    "letters, digits, '-', '_' and '.'",
				    n);
			return -EINVAL;
		}
	}
	for (int i = 0; i < p->nsecs; i++) {
		if (p->secs[i].kind == SEC_TARGET && strcmp(p->secs[i].name, n) == 0) {
			cfg_err_add(p->e, s->line, s->label,
				    "duplicate target name "
				    "(first on line %d)",
				    p->secs[i].line);
			return -EINVAL;
		}
	}
	util_strlcpy(s->name, n, sizeof(s->name));
	return 0;
}

/* Classify the text between '[' and ']'. Returns its kind. */
static enum sec_kind classify_section(struct parser *p, struct section *s, char *inner)
{
	char *rest;

	util_strip(inner);
	snprintf(s->label, sizeof(s->label), "[%s]", inner);
	if (strcmp(inner, "wearmon") == 0) {
		for (int i = 0; i < p->nsecs; i++) {
			if (p->secs[i].kind == SEC_GLOBAL) {
				cfg_err_add(p->e, s->line, s->label,
					    "duplicate section "
					    "(first on line %d)",
					    p->secs[i].line);
				return SEC_BAD;
			}
		}
		return SEC_GLOBAL;
	}
	if (strncmp(inner, "target", 6) == 0 && (!inner[6] || isspace((unsigned char)inner[6]))) {
		p->saw_target = 1;
		rest = util_strip(inner + 6);
		return set_target_name(p, s, rest) < 0 ? SEC_BAD : SEC_TARGET;
	}
	cfg_err_add(p->e, s->line, s->label, "unknown section (use [wearmon] or [target NAME])");
	return SEC_BAD;
}

/* A "[...]" line: start a new section. Returns 0 or -ENOMEM. */
static int new_section(struct parser *p, char *inner)
{
	struct section *v = grow(p->secs, p->nsecs, &p->capsecs, sizeof(*v));
	struct section s = { .line = p->lineno };

	if (!v) {
		p->e->oom = 1;
		return -ENOMEM;
	}
	p->secs = v;
	s.kind = classify_section(p, &s, inner);
	p->secs[p->nsecs] = s;
	p->cur = p->nsecs++;
	return 0;
}

/* Where inih ends a section name: at ']' or at an inline comment (';'
 * after white space). Returns the ']' or NULL. */
static const char *find_close(const char *s)
{
	int was_space = 0;

	for (; *s; s++) {
		if (*s == ']')
			return s;
		if (was_space && *s == ';')
			return NULL;
		was_space = isspace((unsigned char)*s);
	}
	return NULL;
}

/* A key line that inih did not pass to on_pair is a syntax error. */
static void check_handled(struct parser *p)
{
	if (p->expect_line && p->handled_line != p->expect_line)
		cfg_err_add(p->e, p->expect_line, "syntax error",
			    "expected \"key = value\", \"[section]\" or a comment");
	p->expect_line = 0;
}

/* Note sections and key lines as inih is handed them. */
static void classify_line(struct parser *p, const char *line)
{
	char inner[LABEL_MAX];
	const char *close;

	if (*line == '\n' || *line == ';' || *line == '#')
		return;
	if (*line != '[') {
		p->expect_line = p->lineno;
		return;
	}
	close = find_close(line + 1);
	if (!close) {
		cfg_err_add(p->e, p->lineno, "syntax error",
			    "section header without a closing ']'");
		p->cur = BAD_HEADER;
		return;
	}
	/* Work on a copy: inih parses this line after us. */
	snprintf(inner, sizeof(inner), "%.*s", (int)(close - line - 1), line + 1);
	new_section(p, inner);
}

/* inih's fgets: one line per call, counted, without leading white space
 * (so inih never sees a continuation line) and never longer than num. */
static char *read_line(char *str, int num, void *stream)
{
	struct parser *p = stream;
	const char *s = p->text + p->pos, *nl;
	size_t n;

	check_handled(p);
	if (p->pos >= p->len || num < 2)
		return NULL;
	nl = memchr(s, '\n', p->len - p->pos);
	n = nl ? (size_t)(nl - s) : p->len - p->pos;
	p->pos += n + (nl != NULL);
	p->lineno++;
	if (p->lineno == 1 && n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		s += 3, n -= 3;
	while (n > 0 && isspace((unsigned char)*s))
		s++, n--;
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	if (n + 2 > (size_t)num) {
		cfg_err_add(p->e, p->lineno, "syntax error", "line is longer than %d characters",
			    num - 2);
		n = 0;
	}
	memcpy(str, s, n);
	str[n] = '\n';
	str[n + 1] = '\0';
	classify_line(p, str);
	return str;
}

static const char *section_label(const struct parser *p)
{
	return p->secs[p->cur].label;
}

/* Levenshtein distance, for "did you mean". */
static int distance(const char *a, const char *b)
{
	int row[64], la = (int)strlen(a), lb = (int)strlen(b);

	if (la >= 64 || lb >= 64)
		return 99;
	for (int j = 0; j <= lb; j++)
		row[j] = j;
	for (int i = 1; i <= la; i++) {
		int diag = row[0];
		row[0] = i;
		for (int j = 1; j <= lb; j++) {
			int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

static void unknown_key(struct parser *p, const char *name)
{
	int best = -1, bestd = 3;

	for (int i = 0; i < K__COUNT; i++) {
		int d = distance(name, cfg_table[i].name);
		if (d < bestd)
			best = i, bestd = d;
	}
	if (best >= 0)
		cfg_err_add(p->e, p->lineno, name,
			    "unknown key \"%s\" in %s (did you mean \"%s\"?)", name,
			    section_label(p), cfg_table[best].name);
	else
		cfg_err_add(p->e, p->lineno, name, "unknown key \"%s\" in %s", name,
			    section_label(p));
}

static const struct entry *find_entry(const struct parser *p, int sec, int key)
{
	for (int i = 0; i < p->nents; i++)
		if (p->ents[i].section == sec && p->ents[i].key == key)
			return &p->ents[i];
	return NULL;
}

/* Store a value, without surrounding double quotes. Returns 0 or -ENOMEM. */
static int add_entry(struct parser *p, int key, const char *value)
{
	struct entry *v = grow(p->ents, p->nents, &p->capents, sizeof(*v));
	size_t n = strlen(value);
	char *copy;

	if (n >= 2 && value[0] == '"' && value[n - 1] == '"')
		copy = strndup(value + 1, n - 2);
	else
		copy = strdup(value);
	if (!v || !copy) {
		free(copy);
		p->e->oom = 1;
		return -ENOMEM;
	}
	p->ents = v;
	p->ents[p->nents++] = (struct entry){ p->cur, key, p->lineno, copy };
	return 0;
}

/* inih handler. Always returns 1: problems go to the error list, and inih's
 * own error return then means syntax only. */
static int on_pair(void *user, const char *section, const char *name, const char *value)
{
	struct parser *p = user;
	const struct entry *prev;
	int k;

	p->handled_line = p->lineno;
	if (p->cur == NO_SECTION) {
		cfg_err_add(p->e, p->lineno, name,
			    "key outside any section (put it under "
			    "[wearmon] or [target NAME])");
		return 1;
	}
	if (p->cur == BAD_HEADER || p->secs[p->cur].kind == SEC_BAD)
		return 1;
	if (!*name) {
		cfg_err_add(p->e, p->lineno, "syntax error", "missing key name before '='");
		return 1;
	}
	k = cfg_key_index(name);
	if (k < 0) {
		unknown_key(p, name);
		return 1;
	}
	if (cfg_table[k].global && p->secs[p->cur].kind == SEC_TARGET) {
		cfg_err_add(p->e, p->lineno, name, "only allowed in [wearmon], not in %s",
			    section_label(p));
		return 1;
	}
	prev = find_entry(p, p->cur, k);
	if (prev)
		cfg_err_add(p->e, p->lineno, name, "duplicate key in %s (first set on line %d)",
			    section_label(p), prev->line);
	else
		add_entry(p, k, value);
	return 1;
}

/* ---- building struct cfg from the entries ---- */

/* Apply the entries of section sec: global keys to c, target keys to t. */
static void apply_section(struct parser *p, int sec, struct cfg *c, struct cfg_target *t)
{
	char msg[MSG_MAX];

	for (int i = 0; i < p->nents; i++) {
		const struct entry *en = &p->ents[i];
		const struct cfg_key *k = &cfg_table[en->key];

		if (en->section != sec)
			continue;
		if (cfg_set_value(k, k->global ? (void *)c : (void *)t, en->value, msg,
				  sizeof(msg)) < 0) {
			cfg_err_add(p->e, en->line, k->name, "%s", msg);
			continue;
		}
		if (k->global) {
			cfg_set_mark(&c->set, en->key);
			c->lines[en->key] = en->line;
		} else {
			cfg_set_mark(&t->set, en->key);
			t->lines[en->key] = en->line;
		}
	}
}

/* Table defaults; they are constants, so a failure is our bug. */
static void apply_defaults(struct cfg *c, struct cfg_target *t)
{
	char msg[MSG_MAX];

	for (int i = 0; i < K__COUNT; i++) {
		const struct cfg_key *k = &cfg_table[i];
		void *base = k->global ? (void *)c : (void *)t;

		if (k->def && cfg_set_value(k, base, k->def, msg, sizeof(msg)) < 0) {
			fprintf(stderr, "cfg: bad default for %s: %s\n", k->name, msg);
			abort();
		}
	}
}

/* alert_below = 0 turns crash alerts off: alert_critical, when not set,
 * follows it to 0 (its 25 % default would otherwise stay above it). One
 * set above 0 is refused by cfg_resolve (the critical threshold is at most
 * alert_below). */
static void critical_follows(struct cfg_target *t)
{
	if (t->alert_below <= 0 && !cfg_set_has(&t->set, K_ALERT_CRITICAL))
		t->alert_critical = 0;
}

/* The value key k has in section sec, else in [wearmon] (global); NULL
 * when neither sets it. */
static const char *entry_value(const struct parser *p, int sec, int global, int k);

/* Required keys must be set in the target or in [wearmon]. */
static void check_required(struct parser *p, int sec, int global, const struct cfg_target *t)
{
	for (int i = 0; i < K__COUNT; i++) {
		if (!cfg_table[i].required || cfg_table[i].global)
			continue;
		if (find_entry(p, sec, i) || (global >= 0 && find_entry(p, global, i)))
			continue;
		cfg_err_add(p->e, t->section_line, cfg_table[i].name,
			    "required key missing in %s (%s)", p->secs[sec].label,
			    cfg_table[i].help);
	}
}

static const char *entry_value(const struct parser *p, int sec, int global, int k)
{
	const struct entry *en = find_entry(p, sec, k);

	if (!en && global >= 0)
		en = find_entry(p, global, k);
	return en ? en->value : NULL;
}

/* One key of the resolved text: the section's value, else [wearmon]'s,
 * else the default; a password is never written out. */
static void text_key(FILE *f, const struct parser *p, int sec, int global, int k)
{
	const struct entry *en = find_entry(p, sec, k);
	const char *tail = "";

	if (!en && global >= 0 && global != sec && (en = find_entry(p, global, k)))
		tail = "   ; from [wearmon]";
	const char *below = entry_value(p, sec, global, K_ALERT_BELOW);

	if (k == K_SECURE_ERASE_PASSWORD)
		fprintf(f, "%s = (not stored)\n", cfg_table[k].name);
	else if (k == K_ALERT_CRITICAL && !en && below && strtod(below, NULL) == 0)
		fprintf(f, "%s = 0%%   ; default: 0 while alert_below = 0\n", cfg_table[k].name);
	else if (en)
		fprintf(f, "%s = %s%s\n", cfg_table[k].name, en->value, tail);
	else
		fprintf(f, "%s = %s   ; default\n", cfg_table[k].name,
			cfg_table[k].def ? cfg_table[k].def : "");
}

/* The configuration as resolved: [wearmon], then every target with every
 * key's effective value. Returns the text (malloc'd) or NULL. */
static char *resolved_text(const struct parser *p, const char *label, int global)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fprintf(f, "; %s, as resolved (every key with its effective value)\n[wearmon]\n", label);
	for (int k = 0; k < K__COUNT; k++)
		if (cfg_table[k].global)
			text_key(f, p, global, global, k);
	for (int i = 0; i < p->nsecs; i++) {
		if (p->secs[i].kind != SEC_TARGET)
			continue;
		fprintf(f, "\n[target %s]\n", p->secs[i].name);
		for (int k = 0; k < K__COUNT; k++)
			if (!cfg_table[k].global)
				text_key(f, p, i, global, k);
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Build the configuration. Returns 0 or -ENOMEM; errors go to p->e. */
static int build(struct parser *p, struct cfg *c)
{
	struct cfg_target *tmpl = calloc(1, sizeof(*tmpl));
	int global = -1, n = 0;

	for (int i = 0; i < p->nsecs; i++) {
		if (p->secs[i].kind == SEC_GLOBAL)
			global = i;
		n += p->secs[i].kind == SEC_TARGET;
	}
	c->targets = calloc(n ? (size_t)n : 1, sizeof(*c->targets));
	if (!tmpl || !c->targets) {
		free(tmpl);
		return -ENOMEM;
	}
	apply_defaults(c, tmpl);
	if (global >= 0) {
		c->section_line = p->secs[global].line;
		apply_section(p, global, c, tmpl);
	}
	c->database_line = c->lines[K_DATABASE];
	for (int i = 0; i < p->nsecs; i++) {
		struct cfg_target *t = &c->targets[c->ntargets];

		if (p->secs[i].kind != SEC_TARGET)
			continue;
		*t = *tmpl;
		util_strlcpy(t->name, p->secs[i].name, sizeof(t->name));
		t->section_line = p->secs[i].line;
		apply_section(p, i, c, t);
		check_required(p, i, global, t);
		critical_follows(t);
		c->ntargets++;
	}
	c->text = resolved_text(p, c->path, global);
	if (!c->text) {
		free(tmpl);
		return -ENOMEM;
	}
	if (!p->saw_target)
		cfg_err_add(p->e, 0, NULL,
			    "no [target NAME] section (at least one target is required)");
	free(tmpl);
	return 0;
}

static void parser_free(struct parser *p)
{
	for (int i = 0; i < p->nents; i++)
		free(p->ents[i].value);
	free(p->ents);
	free(p->secs);
}

/* Parse len bytes of text. Returns 0, -EINVAL or -ENOMEM. */
static int parse_text(const char *text, size_t len, const char *label, struct cfg **out, char *err,
		      size_t errlen)
{
	struct errs e = { .file = label };
	struct parser p = { .text = text, .len = len, .cur = NO_SECTION, .e = &e };
	struct cfg *c = calloc(1, sizeof(*c));
	int rc = 0;

	*out = NULL;
	if (!c) {
		snprintf(err, errlen, "%s: out of memory", label);
		return -ENOMEM;
	}
	util_strlcpy(c->path, label, sizeof(c->path));
	if (memchr(text, '\0', len))
		cfg_err_add(&e, 0, NULL, "contains a NUL byte; not a text file");
	else
		rc = ini_parse_stream(read_line, &p, on_pair, &p);
	check_handled(&p);
	if (rc == -2)
		e.oom = 1;
	else if (rc > 0 && !cfg_errs_at(&e, rc))
		cfg_err_add(&e, rc, "syntax error", "inih could not parse this line");
	if (!e.oom && build(&p, c) < 0)
		e.oom = 1;
	parser_free(&p);
	rc = cfg_errs_finish(&e, err, errlen);
	if (rc < 0)
		cfg_free(c);
	else
		*out = c;
	return rc;
}

/* ---- public API ---- */

const struct cfg_key *cfg_keys(size_t *n)
{
	*n = K__COUNT;
	return cfg_table;
}

int cfg_key_index(const char *name)
{
	for (int i = 0; i < K__COUNT; i++)
		if (strcmp(cfg_table[i].name, name) == 0)
			return i;
	return -ENOENT;
}

int cfg_parse_string(const char *text, const char *label, struct cfg **out, char *err,
		     size_t errlen)
{
	return parse_text(text, strlen(text), label, out, err, errlen);
}

int cfg_load(const char *path, struct cfg **out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t n = 0;
	int rc;

	*out = NULL;
	if (!f) {
		rc = -errno;
		goto fail;
	}
	buf = malloc(FILE_MAX + 1);
	if (!buf) {
		rc = -ENOMEM;
		goto fail;
	}
	n = fread(buf, 1, FILE_MAX + 1, f);
	if (ferror(f)) {
		rc = -EIO;
		goto fail;
	}
	if (n > FILE_MAX) {
		rc = -EFBIG;
		goto fail;
	}
	fclose(f);
	rc = parse_text(buf, n, path, out, err, errlen);
	free(buf);
	return rc;
fail:
	snprintf(err, errlen, "%s: cannot read: %s", path, strerror(-rc));
	if (f)
		fclose(f);
	free(buf);
	return rc;
}

void cfg_free(struct cfg *c)
{
	if (!c)
		return;
	free(c->targets);
	free(c->text);
	free(c);
}

int cfg_line(const struct cfg_target *t, const char *key)
{
	int k = cfg_key_index(key);

	return k < 0 ? 0 : t->lines[k];
}

int cfg_is_set(const struct cfg_target *t, const char *key)
{
	int k = cfg_key_index(key);

	return k >= 0 && cfg_set_has(&t->set, k);
}
