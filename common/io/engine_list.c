/* engine_list: the engines' tables and names, from engine_list.h's list. */
#include "io/engine_list.h"

#include "io/engine_ops.h"

#define NAME_(id, name, ops) [ENGINE_##id] = name,
const char *const engine_kind_names[] = {
	[ENGINE_AUTO] = "auto",
	ENGINE_LIST(NAME_)[ENGINE__COUNT] = NULL,
};

#define TABLE_(id, name, ops) [ENGINE_##id] = &ops,
static const struct engine_ops *const tables[ENGINE__COUNT] = { ENGINE_LIST(TABLE_) };

const char *engine_kind_name(enum engine_kind k)
{
	return (unsigned)k < ENGINE__COUNT ? engine_kind_names[k] : "?";
}

const struct engine_ops *engine_ops_of(enum engine_kind k)
{
	return (unsigned)k < ENGINE__COUNT ? tables[k] : NULL;
}

const char *engine_kind_campaign(enum engine_kind k)
{
	const struct engine_ops *ops = engine_ops_of(k);

	if (k == ENGINE_AUTO || (ops && ops->queued))
		return engine_kind_names[ENGINE_LIBAIO];
	return engine_kind_name(k);
}

int engine_kind_moves_data(enum engine_kind k)
{
	const struct engine_ops *ops = engine_ops_of(k);
	return k == ENGINE_AUTO || (ops && ops->moves_data);
}
