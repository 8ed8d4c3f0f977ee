SUMMARY = "Home Assistant's intent template language parser"
DESCRIPTION = "Parser and matcher of Home Assistant's sentence templates; edge-agent uses its \
               parser to read the users' custom-sentences files (custom intents)."
HOMEPAGE = "https://github.com/OHF-Voice/hassil"
BUGTRACKER = "https://github.com/OHF-Voice/hassil/issues"
SECTION = "devel/python"
CVE_PRODUCT = "hassil"
LICENSE = "Apache-2.0"
LIC_FILES_CHKSUM = "file://LICENSE.md;md5=86d3f3a95c324c9479bd8986968f4327"

SRC_URI[sha256sum] = "05a8acf8ba99b666bb15ffed1ffbc2d3ed342c57638250e7e3475e969cfa6f3f"

inherit pypi python_setuptools_build_meta

RDEPENDS:${PN} += "\
    python3-pyyaml \
    python3-unicode-rbnf \
    python3-unicodedata \
"

BBCLASSEXTEND = "native nativesdk"
