#ifndef VAULTSYNC_CCURL_SHIM_H
#define VAULTSYNC_CCURL_SHIM_H
#include <curl/curl.h>
#endif
