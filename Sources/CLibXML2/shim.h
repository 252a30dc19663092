#ifndef VAULTSYNC_CLIBXML2_SHIM_H
#define VAULTSYNC_CLIBXML2_SHIM_H
#include <libxml/xmlversion.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

/* libxml2's default handlers print parser errors, with excerpts of the document, to stderr. config.xml holds
   Syncthing's API key, so the sidecar installs these no-op handlers before parsing. xmlGenericErrorFunc is variadic,
   which Swift cannot implement, hence the C shim. libxml2 keeps both handlers per thread: call
   vaultsync_xml_silence_errors() on the thread that parses. */
static inline void vaultsync_xml_ignore_generic(void *ctx, const char *msg, ...) {
    (void)ctx;
    (void)msg;
}

#if LIBXML_VERSION >= 21200
static inline void vaultsync_xml_ignore_structured(void *ctx, const xmlError *error) {
#else
static inline void vaultsync_xml_ignore_structured(void *ctx, xmlErrorPtr error) {
#endif
    (void)ctx;
    (void)error;
}

static inline void vaultsync_xml_silence_errors(void) {
    xmlSetGenericErrorFunc(NULL, vaultsync_xml_ignore_generic);
    xmlSetStructuredErrorFunc(NULL, vaultsync_xml_ignore_structured);
}
#endif
