SUMMARY = "Wyoming protocol for voice assistants"
DESCRIPTION = "Event protocol and asyncio client/server of Home Assistant's voice services; \
               edge-agent serves its intent and handle programs with it."
HOMEPAGE = "https://github.com/OHF-voice/wyoming"
BUGTRACKER = "https://github.com/OHF-voice/wyoming/issues"
SECTION = "devel/python"
CVE_PRODUCT = "wyoming"
LICENSE = "MIT"
LIC_FILES_CHKSUM = "file://LICENSE.md;md5=2aa2bed6f8750823223a2c11d7bc90c5"

SRC_URI[sha256sum] = "2a84035d9e51f4be68b27c9791273c5bce29f79f0c37137ea49cc417294f9080"

inherit pypi python_setuptools_build_meta

RDEPENDS:${PN} += "\
    python3-asyncio \
    python3-json \
    python3-logging \
"

BBCLASSEXTEND = "native nativesdk"
