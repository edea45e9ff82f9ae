# bash completion for wearmon(1) and wearmond(8). `make install` puts this
# file where bash-completion loads a command's completion on its first use,
# once as wearmon and once as wearmond.
#
# Target names come from the configuration given with -c (wearmond), else
# the default /etc/wearmon/wearmon.conf, and, for wearmon, from the
# database given with -d (else the default) when it can be read. Column
# names for `history --sort` are the columns that database's history has.

_wearmon_conf_targets()
{
	# [target NAME] sections of a configuration, blanks around NAME allowed
	[ -r "$1" ] || return 0
	sed -n 's/^[[:space:]]*\[[[:space:]]*target[[:space:]]\{1,\}\([^]]*[^][:space:]]\)[[:space:]]*\].*/\1/p' "$1"
}

# The value of option $1 (or $2) given earlier on the command line.
_wearmon_opt_value()
{
	local i
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		"$1" | "$2") echo "${COMP_WORDS[i + 1]}"; return ;;
		"$1"=* | "$2"=*) echo "${COMP_WORDS[i]#*=}"; return ;;
		esac
	done
}

_wearmon_db()
{
	local db
	db=$(_wearmon_opt_value -d --database)
	echo "${db:-/var/lib/wearmon/wearmon.db}"
}

_wearmon_targets()
{
	local db
	db=$(_wearmon_db)
	{
		_wearmon_conf_targets /etc/wearmon/wearmon.conf
		[ -r "$db" ] && command -v sqlite3 >/dev/null &&
			sqlite3 -readonly "$db" 'SELECT name FROM targets' 2>/dev/null
	} | sort -u
}

# The tables and views of the database (export TABLE|VIEW).
_wearmon_tables()
{
	local db
	db=$(_wearmon_db)
	[ -r "$db" ] && command -v sqlite3 >/dev/null &&
		sqlite3 -readonly "$db" "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')
			AND name NOT LIKE 'sqlite_%'" 2>/dev/null
}

# The columns of history in this database: the header of a CSV that no
# row matches.
_wearmon_history_columns()
{
	local db
	db=$(_wearmon_db)
	[ -r "$db" ] || return 0
	"${COMP_WORDS[0]}" -d "$db" history --format csv --since 2999-01-01 2>/dev/null |
		head -n 1 | tr ',' '\n' | sort -u
}

_wearmon()
{
	local cur prev
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	local commands="status history show alerts plot report export merge check"
	local cmd="" i
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i - 1]} in -d | --database) continue ;; esac
		case " $commands " in *" ${COMP_WORDS[i]} "*) cmd=${COMP_WORDS[i]}; break ;; esac
	done

	case $prev in
	-d | --database | --rename)
		COMPREPLY=($(compgen -f -- "$cur")); return ;;
	-o | --output)
		COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--target)
		COMPREPLY=($(compgen -W "$(_wearmon_targets)" -- "$cur")); return ;;
	--format)
		case $cmd in
		status | show) COMPREPLY=($(compgen -W "table json" -- "$cur")) ;;
		export) COMPREPLY=($(compgen -W "csv json" -- "$cur")) ;;
		*) COMPREPLY=($(compgen -W "table csv json" -- "$cur")) ;;
		esac
		return ;;
	--kind)
		COMPREPLY=($(compgen -W "sizes cycles samples wear latency" -- "$cur")); return ;;
	--sort)
		local cols
		cols=$(_wearmon_history_columns)
		# a leading - sorts descending
		COMPREPLY=($(compgen -W "$cols $(printf -- '-%s ' $cols)" -- "$cur")); return ;;
	--cycle | --since | --iteration | --campaign)
		return ;;
	esac

	local opts
	case $cmd in
	"") opts="-d --database -h --help -V --version $commands" ;;
	status) opts="--target --format" ;;
	history) opts="--target --cycle --since --format --sort" ;;
	show) opts="--format" ;;
	alerts) opts="--target --since --format" ;;
	plot) opts="--kind -o --output --target --iteration" ;;
	report) opts="-o --output --target --campaign" ;;
	export) opts="--target --format -o --output" ;;
	merge) opts="-o --output --rename" ;;
	check) opts="" ;;
	esac
	if [ "$cmd" = export ] && [[ $cur != -* ]]; then
		opts="$opts $(_wearmon_tables)"
	fi
	if [ "$cmd" = merge ] && [[ $cur != -* ]]; then
		COMPREPLY=($(compgen -f -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}

_wearmond()
{
	local cur prev
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	case $prev in
	-c | --config)
		COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--new-campaign)
		local conf
		conf=$(_wearmon_opt_value -c --config)
		COMPREPLY=($(compgen -W "all $(_wearmon_conf_targets "${conf:-/etc/wearmon/wearmon.conf}")" -- "$cur"))
		return ;;
	esac
	local opts="-c --config -n --check --json -f --foreground -j --journal -d --debug --new-campaign -h --help -V --version"
	COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}

complete -F _wearmon wearmon
complete -F _wearmond wearmond
