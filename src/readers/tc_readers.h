/*
 * tc_readers.h - every reader's descriptor, declared once: each reader's file defines its own,
 * and the engine's registry (engine/registry.c) lists them in this order. Probing ties are
 * broken by scores, never by the order. Adding a reader = its file + one line here + its
 * corpus cases (and one word in CMakeLists.txt's TC_LIB_SOURCES).
 * Prefix tci_. Not installed; CONTRIBUTING.md, Layers: the layers and who includes what.
 */
#ifndef TC_TC_READERS_H
#define TC_TC_READERS_H

#include "tc_reader.h"

#define TCI_READERS(X) \
    X(tci_reader_art) \
    X(tci_reader_art_v2) \
    X(tci_reader_ir) \
    X(tci_reader_json) \
    X(tci_reader_systrace) \
    X(tci_reader_rhea) \
    X(tci_reader_art_longrun) \
    X(tci_reader_pftrace)

#define TCI_READER_DECLARE(sym) extern const tci_reader sym;
TCI_READERS(TCI_READER_DECLARE)
#undef TCI_READER_DECLARE

#endif /* TC_TC_READERS_H */
