/*
 * tc_writers.h - every writer's descriptor and every format of traceconv diff, declared once:
 * each writer's file defines its own, and the engine's registry (engine/registry.c) lists them
 * in this order (the order of --list-formats and --help). Adding a writer = its file + one line
 * here + its tests (and one word in CMakeLists.txt's TC_LIB_SOURCES).
 * Prefix tci_. Not installed; CONTRIBUTING.md, Layers: the layers and who includes what.
 */
#ifndef TC_TC_WRITERS_H
#define TC_TC_WRITERS_H

#include "tc_diff.h"
#include "tc_writer.h"

#define TCI_WRITERS(X) \
    X(tci_writer_json) \
    X(tci_writer_folded) \
    X(tci_writer_perfetto) \
    X(tci_writer_pprof) \
    X(tci_writer_ir) \
    X(tci_writer_systrace) \
    X(tci_writer_flamegraph) \
    X(tci_writer_report) \
    X(tci_writer_dot) \
    X(tci_writer_speedscope) \
    X(tci_writer_activity)

#define TCI_DIFF_FORMATS(X) \
    X(tci_diff_text) \
    X(tci_diff_csv) \
    X(tci_diff_flamegraph)

#define TCI_WRITER_DECLARE(sym) extern const tci_writer sym;
#define TCI_DIFF_FORMAT_DECLARE(sym) extern const tci_diff_format sym;
TCI_WRITERS(TCI_WRITER_DECLARE)
TCI_DIFF_FORMATS(TCI_DIFF_FORMAT_DECLARE)
#undef TCI_WRITER_DECLARE
#undef TCI_DIFF_FORMAT_DECLARE

#endif /* TC_TC_WRITERS_H */
