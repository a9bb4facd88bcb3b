/* SPDX-License-Identifier: MIT */
/* optgen.c: the shell completions made from the option table at build time
 * (as curl makes its own from one source per option), so they cannot
 * disagree with it. Usage: optgen bash|zsh|fish|list > FILE; list prints
 * each option's spellings, one option a line, for the tests. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "optable.h"

static const char *const head = "# SPDX-License-Identifier: MIT\n"
				"# Made from dupscan's option table (src/cli/input/optable.c) by optgen at build time.\n";

/* s inside single quotes (a quote as '\''), with zsh's specials escaped
 * (zsh_escape: ':' in option names and values, '[' and ']' in texts). */
static void quoted(const char *s, bool zsh_escape, FILE *out)
{
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", out);
		else if (zsh_escape && strchr(":[]", *s))
			fprintf(out, "\\%c", *s);
		else
			fputc(*s, out);
	}
}

static bool is_words(const struct opt_def *d)
{
	return d->values && d->values[0] != '@';
}

/* bash: what a value of d completes to, as compgen's arguments; words are
 * no file names (compopt +o filenames: no "\=" and no "/" added). */
static void bash_values(const struct opt_def *d, FILE *out)
{
	if (!d->values)
		fputs("-W ''", out);
	else if (!strcmp(d->values, OPT_FILES))
		fputs("-f", out);
	else if (!strcmp(d->values, OPT_DIRS_))
		fputs("-d", out);
	else
		fprintf(out, "-W '%s'", d->values);
}

static const char *bash_words(const struct opt_def *d)
{
	return is_words(d) || !d->values ? " compopt +o filenames 2>/dev/null;" : "";
}

/* bash splits the line into words at '=' and ':' too (COMP_WORDBREAKS), and
 * replaces only the part after the last of them: the word typed is put
 * together again from its pieces, matched whole, and each reply given back
 * without the part bash keeps (as bash-completion's __ltrim_colon_completions
 * does for ':'). */
static const char bash_head[] =
	"_dupscan()\n{\n"
	"    local cur prev i brk keep\n"
	"    i=$COMP_CWORD\n"
	"    cur=${COMP_WORDS[i]}\n"
	"    while (( i > 1 )) && [[ ${COMP_WORDS[i]} == [=:] || ${COMP_WORDS[i-1]} == [=:] ]]; do\n"
	"        i=$((i - 1)); cur=${COMP_WORDS[i]}$cur\n"
	"    done\n"
	"    prev=${COMP_WORDS[i-1]}\n"
	"    _dupscan_reply \"$cur\" \"$prev\"\n"
	"    brk=\n"
	"    [[ $COMP_WORDBREAKS == *=* ]] && brk+='='\n"
	"    [[ $COMP_WORDBREAKS == *:* ]] && brk+=':'\n"
	"    if [[ -n $brk && $cur == *[$brk]* ]]; then\n"
	"        keep=${cur%\"${cur##*[$brk]}\"}\n"
	"        COMPREPLY=(\"${COMPREPLY[@]#\"$keep\"}\")\n"
	"    fi\n"
	"    # an option that takes its value after '=' is not finished by a space\n"
	"    [[ ${#COMPREPLY[@]} == 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null\n"
	"}\n";

static void bash_script(FILE *out)
{
	fprintf(out, "%s_dupscan_reply()\n{\n    local cur=$1 prev=$2\n    case $prev in\n", head);
	for (size_t i = 0; i < opt_count; i++) { /* "-o name": the value a word of its own */
		const struct opt_def *d = &opt_table[i];
		if (d->arg != OPT_ARG_REQUIRED)
			continue;
		fputs("        ", out);
		if (d->letter)
			fprintf(out, "-%c|", d->letter);
		fprintf(out, "--%s)%s%s COMPREPLY=($(compgen ", d->name,
			d->flags & OPTF_NOSPACE ? " compopt -o nospace 2>/dev/null;" : "", bash_words(d));
		bash_values(d, out);
		fputs(" -- \"$cur\")); return ;;\n", out);
	}
	fputs("    esac\n    case $cur in\n", out);
	for (size_t i = 0; i < opt_count; i++) { /* "--order=name" */
		const struct opt_def *d = &opt_table[i];
		if (d->arg == OPT_ARG_NONE)
			continue;
		fprintf(out, "        --%s=*)%s%s COMPREPLY=($(compgen -P \"--%s=\" ", d->name,
			d->flags & OPTF_NOSPACE ? " compopt -o nospace 2>/dev/null;" : "", bash_words(d), d->name);
		bash_values(d, out);
		fputs(" -- \"${cur#*=}\")); return ;;\n", out);
	}
	fputs("        -*) compopt +o filenames 2>/dev/null; COMPREPLY=($(compgen -W '", out);
	for (size_t i = 0; i < opt_count; i++) {
		const struct opt_def *d = &opt_table[i];
		if (d->letter)
			fprintf(out, "-%c ", d->letter);
		fprintf(out, d->arg == OPT_ARG_NONE ? "--%s " : d->arg == OPT_ARG_REQUIRED ? "--%s= " : "--%s --%s= ", d->name,
			d->name);
	}
	fprintf(out, "' -- \"$cur\")); return ;;\n    esac\n    COMPREPLY=($(compgen -f -- \"$cur\"))\n}\n%s"
		     "complete -o filenames -F _dupscan dupscan\n", bash_head);
}

/* zsh: one _arguments spec for a spelling of d (-C+ or --chunk-size=). */
static void zsh_spec(const struct opt_def *d, bool is_long, FILE *out)
{
	fputc('\'', out);
	if (d->flags & OPTF_REPEAT)
		fputc('*', out);
	else if (d->flags & OPTF_ALONE)
		fputs("(- *)", out);
	else if (d->letter) {
		fprintf(out, "(-%c --", d->letter);
		quoted(d->name, true, out);
		fputc(')', out);
	}
	if (is_long) {
		fputs("--", out);
		quoted(d->name, true, out);
	} else {
		fprintf(out, "-%c", d->letter);
	}
	if (d->arg != OPT_ARG_NONE)
		fputs(d->arg == OPT_ARG_OPTIONAL ? "=-" : is_long ? "=" : "+", out);
	fputc('[', out);
	quoted(d->brief, true, out);
	fputc(']', out);
	if (d->arg != OPT_ARG_NONE) {
		fputs(d->arg == OPT_ARG_OPTIONAL ? "::" : ":", out);
		quoted(d->meta, true, out);
		fputc(':', out);
		if (is_words(d)) {
			fputc('(', out);
			quoted(d->values, true, out);
			fputc(')', out);
		} else if (d->values) {
			fputs(strcmp(d->values, OPT_FILES) ? "_directories" : "_files", out);
		}
	}
	fputs("'\n", out);
}

static void zsh_script(FILE *out)
{
	fprintf(out, "#compdef dupscan\n%s\n_dupscan() {\n  local -a args\n  args=(\n", head);
	for (size_t i = 0; i < opt_count; i++) {
		const struct opt_def *d = &opt_table[i];
		if (d->letter) {
			fputs("    ", out);
			zsh_spec(d, false, out);
		}
		fputs("    ", out);
		zsh_spec(d, true, out);
	}
	fputs("    '*:file or directory:_files'\n  )\n  _arguments -s -S $args\n}\n\n_dupscan \"$@\"\n", out);
}

static void fish_script(FILE *out)
{
	fputs(head, out);
	for (size_t i = 0; i < opt_count; i++) {
		const struct opt_def *d = &opt_table[i];
		fputs("complete -c dupscan", out);
		if (d->letter)
			fprintf(out, " -s %c", d->letter);
		fputs(" -l '", out);
		quoted(d->name, false, out);
		fputc('\'', out);
		if (d->arg != OPT_ARG_NONE && d->values && !strcmp(d->values, OPT_FILES))
			fputs(d->arg == OPT_ARG_REQUIRED ? " -r -F" : "", out);
		else if (d->arg != OPT_ARG_NONE && d->values && !strcmp(d->values, OPT_DIRS_))
			fputs(" -x -a '(__fish_complete_directories)'", out);
		else if (d->arg != OPT_ARG_NONE)
			fprintf(out, "%s%s%s%s", d->arg == OPT_ARG_REQUIRED ? " -x" : " -f", d->values ? " -a '" : "",
				d->values ? d->values : "", d->values ? "'" : "");
		fputs(" -d '", out);
		quoted(d->brief, false, out);
		fputs("'\n", out);
	}
}

int main(int argc, char **argv)
{
	const char *what = argc == 2 ? argv[1] : "";
	if (!strcmp(what, "bash"))
		bash_script(stdout);
	else if (!strcmp(what, "zsh"))
		zsh_script(stdout);
	else if (!strcmp(what, "fish"))
		fish_script(stdout);
	else if (!strcmp(what, "list"))
		for (size_t i = 0; i < opt_count; i++)
			opt_table[i].letter ? printf("-%c --%s\n", opt_table[i].letter, opt_table[i].name)
					    : printf("--%s\n", opt_table[i].name);
	else {
		fputs("usage: optgen bash|zsh|fish|list\n", stderr);
		return 2;
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
