SUMMARY = "Number words from the Unicode CLDR's rule-based number format"
DESCRIPTION = "Spells numbers as words; a dependency of hassil (edge-agent's custom intents \
               parse templates only and never load it themselves)."
HOMEPAGE = "https://github.com/rhasspy/unicode-rbnf"
BUGTRACKER = "https://github.com/rhasspy/unicode-rbnf/issues"
SECTION = "devel/python"
CVE_PRODUCT = "unicode-rbnf"
LICENSE = "MIT"
LIC_FILES_CHKSUM = "file://LICENSE.md;md5=2aa2bed6f8750823223a2c11d7bc90c5"

PYPI_PACKAGE = "unicode_rbnf"
SRC_URI[sha256sum] = "17621d76cb9dd22eac493f667317b8563820b3d674374af130017ab281ca8648"

inherit pypi python_setuptools_build_meta

RDEPENDS:${PN} += "\
    python3-logging \
    python3-xml \
"

BBCLASSEXTEND = "native nativesdk"
