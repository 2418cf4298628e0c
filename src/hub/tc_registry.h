/*
 * tc_registry.h - every format's descriptor, declared once from formats.def: each reader's and
 * writer's file defines its own (and includes this for its declaration); only the engine's
 * registry (engine/registry.c, engine/tc_engine.h: finding them by name, their options) uses them.
 * Prefix tci_. Not installed; README.md, Layout: the layers and who includes what.
 */
#ifndef TC_TC_REGISTRY_H
#define TC_TC_REGISTRY_H

#include "tc_reader.h"
#include "tc_writer.h"
#include "tc_base.h"

#define TCI_READER(sym) extern const tci_reader sym;
#define TCI_WRITER(sym) extern const tci_writer sym;
#define TCI_DIFF(sym) extern const tci_diff_format sym;
#include "formats.def"
#undef TCI_READER
#undef TCI_WRITER
#undef TCI_DIFF


#endif /* TC_TC_REGISTRY_H */
