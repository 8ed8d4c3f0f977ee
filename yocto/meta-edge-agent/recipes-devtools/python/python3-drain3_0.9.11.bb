SUMMARY = "Persistent and streaming log template miner"
DESCRIPTION = "Drain3 mines log templates from a stream of log lines with the \
               Drain algorithm; edge-agent uses it to group log lines by template."
HOMEPAGE = "https://github.com/logpai/Drain3"
BUGTRACKER = "https://github.com/logpai/Drain3/issues"
SECTION = "devel/python"
CVE_PRODUCT = "drain3"
LICENSE = "MIT"
LIC_FILES_CHKSUM = "file://LICENSE.txt;md5=fb069043ec1917dc295bdcceb7a34e56"

SRC_URI[sha256sum] = "9ab4b1407fad74f56554ae371ef019c3c7985861631f4bab46a0e92585125f75"

inherit pypi setuptools3

RDEPENDS:${PN} += "\
    python3-cachetools \
    python3-jsonpickle \
    python3-logging \
"

BBCLASSEXTEND = "native nativesdk"
