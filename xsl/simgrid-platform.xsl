<?xml version="1.0" encoding="UTF-8"?>
<!--
  xsl/simgrid-platform.xsl - tapestry's job description for SimGrid
  (tapestry-simgrid, written by `tapestry export -f simgrid-platform`) to a
  SimGrid 4.1 platform: one host per MPI rank with its calibrated speed,
  each host linked to one switch (a star: every route crosses two links,
  host - switch - host), shortest paths computed by Floyd routing. Links are
  full duplex (SPLITDUPLEX: what a host sends does not take bandwidth from
  what it receives, as on a switched network or in shared memory; the
  launch's ping-pong measured one direction at a time).
-->
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="xml" indent="yes" encoding="UTF-8"
              doctype-system="https://simgrid.org/simgrid.dtd"/>

  <xsl:template match="/tapestry-simgrid">
    <xsl:variable name="net" select="network"/>
    <platform version="4.1">
      <zone id="tapestry" routing="Floyd">
        <xsl:for-each select="host">
          <host id="{@id}" speed="{@speed}f"/>
        </xsl:for-each>
        <router id="tapestry-switch"/>
        <xsl:for-each select="host">
          <link id="{@id}-link" bandwidth="{$net/@link-bandwidth}Bps"
                latency="{$net/@link-latency}s" sharing_policy="SPLITDUPLEX"/>
        </xsl:for-each>
        <xsl:for-each select="host">
          <route src="{@id}" dst="tapestry-switch">
            <link_ctn id="{@id}-link" direction="UP"/>
          </route>
        </xsl:for-each>
      </zone>
    </platform>
  </xsl:template>
</xsl:stylesheet>
