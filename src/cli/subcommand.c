/*
 * subcommand.c - the programs traceconv-batch and traceconv-serve.
 *
 * `traceconv batch ...` and `traceconv serve ...` run these (main.c,
 * run_subcommand: an exec, with the same arguments), so that traceconv itself,
 * started once for every conversion, loads only what a conversion needs:
 * libarchive and libmicrohttpd bring some twenty more shared libraries (ICU,
 * GnuTLS, ...), which cost every start of a program linked with them about
 * 20 ms, more than a small conversion.
 *
 * Built twice (CMakeLists.txt): TC_SUBCOMMAND is the subcommand's entry point,
 * TC_SUBCOMMAND_NAME the name its messages start with ("traceconv batch").
 */
#include "cli_util.h"
#include "outfile.h"

int TC_SUBCOMMAND(int argc, char **argv);

int main(int argc, char **argv)
{
    of_init(); /* the output-file rules: the umask read once, SIGXFSZ ignored */
    argv[0] = (char *)TC_SUBCOMMAND_NAME; /* never the program's full path in a message */
    cli_stdout_checked(TC_SUBCOMMAND_NAME); /* --help > /dev/full: exit 1, saying so */
    return cli_finish(TC_SUBCOMMAND(argc, argv));
}
