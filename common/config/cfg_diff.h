/* cfg_diff: comparing two campaign keys as text. Calls no other module, so
 * that the database, which only compares, links no config parser. */
#ifndef WEARMON_CFG_DIFF_H
#define WEARMON_CFG_DIFF_H

#include <stddef.h>

/* Compare two campaign keys: the names of the keys whose values differ
 * (", "-separated) go to names; a key present in only one of them is no
 * difference (a key added to the list later does not end campaigns).
 * Returns how many differ. */
int cfg_campaign_diff(const char *old, const char *now, char *names, size_t len);

#endif
