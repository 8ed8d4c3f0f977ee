SUMMARY = "Python binding of the SentencePiece tokenizer"
DESCRIPTION = "Python wrapper of SentencePiece, built against the sentencepiece \
               library found through pkg-config (no bundled build, no network)."
HOMEPAGE = "https://github.com/google/sentencepiece"
BUGTRACKER = "https://github.com/google/sentencepiece/issues"
SECTION = "devel/python"
CVE_PRODUCT = "sentencepiece"
LICENSE = "Apache-2.0"
LIC_FILES_CHKSUM = "file://sentencepiece/LICENSE;md5=3b83ef96387f14655fc854ddc3c6bd57"

SRC_URI[sha256sum] = "a52c19171daaf2e697dc6cbe67684e0fa341b1248966f6aebb541de654d15843"

inherit pypi setuptools3 pkgconfig

DEPENDS += "sentencepiece"
RDEPENDS:${PN} += "python3-core"

BBCLASSEXTEND = "native nativesdk"
