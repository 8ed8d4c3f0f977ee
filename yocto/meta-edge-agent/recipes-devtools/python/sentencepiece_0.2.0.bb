SUMMARY = "Unsupervised text tokenizer library"
DESCRIPTION = "SentencePiece is a subword tokenizer and detokenizer; this is the C++ \
               library and its pkg-config file, which python3-sentencepiece links against."
HOMEPAGE = "https://github.com/google/sentencepiece"
BUGTRACKER = "https://github.com/google/sentencepiece/issues"
SECTION = "libs"
CVE_PRODUCT = "sentencepiece"
LICENSE = "Apache-2.0"
LIC_FILES_CHKSUM = "file://LICENSE;md5=3b83ef96387f14655fc854ddc3c6bd57"

# the PyPI source archive carries the complete C++ tree in its sentencepiece/ folder
SRC_URI = "https://files.pythonhosted.org/packages/source/s/sentencepiece/sentencepiece-${PV}.tar.gz"
SRC_URI[sha256sum] = "a52c19171daaf2e697dc6cbe67684e0fa341b1248966f6aebb541de654d15843"
S = "${WORKDIR}/sentencepiece-${PV}/sentencepiece"

inherit cmake pkgconfig

EXTRA_OECMAKE += "-DSPM_ENABLE_SHARED=ON -DSPM_ENABLE_TCMALLOC=OFF"

BBCLASSEXTEND = "native nativesdk"
