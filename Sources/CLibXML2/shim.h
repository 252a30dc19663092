#ifndef VAULTSYNC_CLIBXML2_SHIM_H
#define VAULTSYNC_CLIBXML2_SHIM_H
#include <libxml/xmlversion.h>
/* Debian's libxml2 is built with ICU, and its encoding.h then includes ICU's headers, whose UErrorCode clashes with
   Foundation's own ICU copy in a test module that imports Foundation and sees this module (a clean build failed on
   it, depending on the order modules were built). Nothing here uses libxml2's ICU converter fields, and the release
   build's libxml2 (scripts/static-deps, --without-icu) has none: read the headers without them. */
#undef LIBXML_ICU_ENABLED
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
