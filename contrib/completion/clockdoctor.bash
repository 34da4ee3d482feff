# SPDX-License-Identifier: MIT
# bash completion for clockdoctor: its commands, each command's options, and
# files for an option's value.  Nothing here lists an option: the words come
# from the command being completed (`clockdoctor --list-options`, its getopt
# tables: COMMAND, -x, --long, none|required|optional|moved, tab-separated),
# so that the completion is always the one of the binary installed.
_clockdoctor()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=
	((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
	local prog=${COMP_WORDS[0]} table cmd= i words
	COMPREPLY=()
	prog=${prog/#\~/$HOME}
	# only a program named clockdoctor is asked
	[[ ${prog##*/} == clockdoctor ]] || prog=clockdoctor
	table=$("$prog" --list-options 2>/dev/null) || return 0
	# the command: the first word after the program that is not an option
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-*) ;;
		*) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done
	if [[ -z $cmd || $cmd == help ]]; then
		if [[ -z $cmd && $cur == -* ]]; then
			words=$(awk -F'\t' '$1 == "clockdoctor" {print $2; print $3}' <<<"$table")
		elif [[ -z $cmd || $i -eq $((COMP_CWORD - 1)) ]]; then
			words="$(awk -F'\t' '$1 != "clockdoctor" && !seen[$1]++ {print $1}' <<<"$table") help"
		fi
		[[ $cmd == help ]] && words=${words% help}
		COMPREPLY=($(compgen -W "$words" -- "$cur"))
		return 0
	fi
	# after `--` the words are operands (run's PROGRAM and its own options)
	for ((i = i + 1; i < COMP_CWORD; i++)); do
		[[ ${COMP_WORDS[i]} == -- ]] && return 0
	done
	# the value of an option that takes one: files (-o default)
	if [[ $prev == -* ]] &&
	   awk -F'\t' -v c="$cmd" -v o="$prev" '$1 == c && ($2 == o || $3 == o) && $4 == "required" {f = 1} END {exit !f}' \
	       <<<"$table"; then
		return 0
	fi
	if [[ $cur == -* ]]; then
		words=$(awk -F'\t' -v c="$cmd" '$1 == c && $4 != "moved" {print $2; print $3}' <<<"$table")
		COMPREPLY=($(compgen -W "$words" -- "$cur"))
	fi
	return 0
}
complete -o default -F _clockdoctor clockdoctor
