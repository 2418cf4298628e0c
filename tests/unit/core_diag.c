/* core_diag: an error or warning is one printable line whatever input bytes it quotes. */
#include "tc_diag.h"
#include "unit.h"

#include <stdlib.h>

static void test_error_escapes_control_and_broken_utf8(void)
{
    tci_diag d;
    memset(&d, 0, sizeof d);
    d.input = "in\n.txt";
    const char quoted[] = "a\nb\x0b\xbd\x7f caf\xc3\xa9 \xe2\x82";
    tci_error(&d, TC_ERR_FORMAT, "systrace", 16, "bad line (\"%s\")", quoted);
    CHECK_EQ_STR(d.error, "in\\x0a.txt: systrace: offset 0x10: bad line (\"a\\x0ab\\x0b\\xbd\\x7f caf\xc3\xa9 \\xe2\\x82\")");
}

static void test_warning_kept_printable(void)
{
    tci_diag d;
    memset(&d, 0, sizeof d);
    tci_warn(&d, TCI_FIG_BAD_LINE, "rhea", UINT64_MAX, "name \"%s\"", "x\ry");
    CHECK_EQ_INT(d.n_kept, 1);
    CHECK_EQ_STR(d.kept[0], "rhea: name \"x\\x0dy\"");
    free(d.kept[0]);
}

static void test_long_message_cut_at_an_escape_boundary(void)
{
    tci_diag d;
    memset(&d, 0, sizeof d);
    char big[3000];
    memset(big, '\x01', sizeof big - 1);
    big[sizeof big - 1] = 0;
    tci_error(&d, TC_ERR_FORMAT, "m", UINT64_MAX, "%s", big);
    size_t n = strlen(d.error);
    CHECK(n < sizeof d.error);
    CHECK((n - 3) % 4 == 0); /* "m: " then whole "\x01" escapes only */
}

int main(void)
{
    UNIT_RUN(test_error_escapes_control_and_broken_utf8);
    UNIT_RUN(test_warning_kept_printable);
    UNIT_RUN(test_long_message_cut_at_an_escape_boundary);
    return UNIT_DONE();
}
