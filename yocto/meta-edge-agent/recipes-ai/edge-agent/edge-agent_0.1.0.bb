# nooelint: oelint.var.bbclassextend - a target-only service: its runtime deps have no -native variants
SUMMARY = "On-device language agent for IoT gateways"
DESCRIPTION = "edge-agent reads transcripts and log lines from MQTT, recognizes \
               Home Assistant intents and summarizes logs with an int8 TensorFlow \
               Lite model, and publishes the results back to MQTT. It runs as a \
               sandboxed systemd service."
HOMEPAGE = "https://github.com/edge-agent/edge-agent"
BUGTRACKER = "https://github.com/edge-agent/edge-agent/issues"
SECTION = "devel/python"
CVE_PRODUCT = "edge-agent"
LICENSE = "Apache-2.0"
# the license line of pyproject.toml (the project has no separate license file yet)
LIC_FILES_CHKSUM = "file://pyproject.toml;beginline=13;endline=13;md5=2507bd5f0713f05419cd2f22fa06fe62"

# The layer lives in the edge-agent repository (yocto/meta-edge-agent), so the recipe builds the
# checkout the layer came from: layer and source are versioned together and nothing is fetched.
# The repository root is added to the file search path here, in the recipe, because that is
# where the sources are (not a bbappend overriding someone else's files).
# nooelint: oelint.vars.fileextrapaths,oelint.vars.outofcontext
FILESEXTRAPATHS:prepend := "${THISDIR}/../../../..:"
SRC_URI = "file://pyproject.toml;subdir=${BP} \
           file://README.md;subdir=${BP} \
           file://edge_agent;subdir=${BP} \
           file://configs/default.yaml;subdir=${BP} \
           file://edge-agent.service \
           "
S = "${WORKDIR}/${BP}"

inherit python_setuptools_build_meta systemd

# pyproject.toml states its licence as an SPDX string, which needs setuptools >= 77 (PEP 639);
# scarthgap's python3-setuptools-native (69.1) refuses it. The wheel is built from a copy whose
# pyproject.toml has the table form 69 reads; the checkout in ${S} (and LIC_FILES_CHKSUM) is kept.
PEP517_SOURCE_PATH = "${WORKDIR}/pep517-source"
do_configure:prepend() {
    rm -rf ${PEP517_SOURCE_PATH}
    cp -R --no-preserve=ownership ${S} ${PEP517_SOURCE_PATH}
    sed -i -e 's/^license = "Apache-2.0"$/license = { text = "Apache-2.0" }/' \
        -e 's/"setuptools>=77"/"setuptools>=69"/' ${PEP517_SOURCE_PATH}/pyproject.toml
}

PACKAGES =+ "${PN}-model"

FILES:${PN}-model += "${PYTHON_SITEPACKAGES_DIR}/edge_agent/models"
FILES:${PN} += "${systemd_system_unitdir}/edge-agent.service"
CONFFILES:${PN} = "${sysconfdir}/edge-agent/config.yaml"

RDEPENDS:${PN} += "\
    python3-core \
    python3-cryptography \
    python3-drain3 \
    python3-hassil \
    python3-numpy \
    python3-orjson \
    python3-paho-mqtt \
    python3-pydantic \
    python3-pyyaml \
    python3-sentencepiece \
    python3-sqlite3 \
    python3-structlog \
    python3-tensorflow-lite \
    python3-wyoming \
"
# the default model bundle; leave it out (BAD_RECOMMENDATIONS) when config points elsewhere
RRECOMMENDS:${PN} += "${PN}-model"

SYSTEMD_SERVICE:${PN} = "edge-agent.service"
SYSTEMD_AUTO_ENABLE:${PN} = "enable"

do_install:append() {
    install -d ${D}${systemd_system_unitdir}
    install -m 0644 ${WORKDIR}/edge-agent.service ${D}${systemd_system_unitdir}/edge-agent.service
    install -d ${D}${sysconfdir}/edge-agent/credentials
    install -m 0644 ${S}/configs/default.yaml ${D}${sysconfdir}/edge-agent/config.yaml
}
