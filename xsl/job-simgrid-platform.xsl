<?xml version="1.0" encoding="UTF-8"?>
<!--
  xsl/job-simgrid-platform.xsl - tapestry job description to a SimGrid 4.1
  platform with the job's topology: every host on a link to its site's
  router, every site router on a link to one backbone router; routes by
  Floyd. Speeds and bandwidths are nominal (1 Gflop/s, 1.25 GB/s; 50 us in
  a site, 500 us between sites) until `tapestry export -f simgrid-platform`
  calibrates them from a trace. Links are full duplex (SPLITDUPLEX).
-->
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="xml" indent="yes" encoding="UTF-8"
              doctype-system="https://simgrid.org/simgrid.dtd"/>
  <xsl:key name="site" match="hosts/host" use="concat(@site, substring('default', 1, 7 * not(@site)))"/>

  <xsl:template name="site-of">
    <xsl:param name="h"/>
    <xsl:choose>
      <xsl:when test="$h/@site"><xsl:value-of select="$h/@site"/></xsl:when>
      <xsl:otherwise>default</xsl:otherwise>
    </xsl:choose>
  </xsl:template>

  <xsl:template match="/job">
    <xsl:variable name="sites"
        select="hosts/host[generate-id() = generate-id(key('site', concat(@site, substring('default', 1, 7 * not(@site))))[1])]"/>
    <platform version="4.1">
      <zone id="{@name}" routing="Floyd">
        <xsl:for-each select="hosts/host">
          <host id="{@name}" speed="1Gf"/>
        </xsl:for-each>
        <xsl:for-each select="$sites">
          <xsl:variable name="s"><xsl:call-template name="site-of"><xsl:with-param name="h" select="."/></xsl:call-template></xsl:variable>
          <router id="site-{$s}"/>
        </xsl:for-each>
        <router id="backbone"/>
        <xsl:for-each select="hosts/host">
          <link id="{@name}-link" bandwidth="1.25GBps" latency="50us" sharing_policy="SPLITDUPLEX"/>
        </xsl:for-each>
        <xsl:for-each select="$sites">
          <xsl:variable name="s"><xsl:call-template name="site-of"><xsl:with-param name="h" select="."/></xsl:call-template></xsl:variable>
          <link id="site-{$s}-link" bandwidth="1.25GBps" latency="500us" sharing_policy="SPLITDUPLEX"/>
        </xsl:for-each>
        <xsl:for-each select="hosts/host">
          <xsl:variable name="s"><xsl:call-template name="site-of"><xsl:with-param name="h" select="."/></xsl:call-template></xsl:variable>
          <route src="{@name}" dst="site-{$s}"><link_ctn id="{@name}-link" direction="UP"/></route>
        </xsl:for-each>
        <xsl:for-each select="$sites">
          <xsl:variable name="s"><xsl:call-template name="site-of"><xsl:with-param name="h" select="."/></xsl:call-template></xsl:variable>
          <route src="site-{$s}" dst="backbone"><link_ctn id="site-{$s}-link" direction="UP"/></route>
        </xsl:for-each>
      </zone>
    </platform>
  </xsl:template>
</xsl:stylesheet>
