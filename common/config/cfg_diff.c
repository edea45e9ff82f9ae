/* cfg_diff: which keys differ between two campaign keys, compared as text.
 * Kept apart from cfg_campaign.c (which reads the key table) so that the
 * database, which only compares, links no config parser. */
#include <stdio.h>
#include <string.h>

#include "config/cfg_diff.h"

/* The length of line's key name (up to '='), 0 when it has none. */
static size_t name_len(const char *line, const char *end)
{
	const char *eq = memchr(line, '=', (size_t)(end - line));
	return eq ? (size_t)(eq - line) : 0;
}

/* The line of text whose key name is the n bytes at name, or NULL; its
 * end in *end. */
static const char *find_key(const char *text, const char *name, size_t n, const char **end)
{
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		*end = nl ? nl : p + strlen(p);
		if (name_len(p, *end) == n && !memcmp(p, name, n))
			return p;
		p = *end + (nl != NULL);
	}
	return NULL;
}

int cfg_campaign_diff(const char *old, const char *now, char *names, size_t len)
{
	size_t used = 0;
	int n = 0;

	names[0] = '\0';
	for (const char *p = now; *p;) {
		const char *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p), *oend;
		size_t k = name_len(p, end);
		const char *o = k ? find_key(old, p, k, &oend) : NULL;
		if (o && (oend - o != end - p || memcmp(o, p, (size_t)(end - p)))) {
			if (used < len)
				used += (size_t)snprintf(names + used, len - used, "%s%.*s",
							 n ? ", " : "", (int)k, p);
			n++;
		}
		p = end + (nl != NULL);
	}
	return n;
}
