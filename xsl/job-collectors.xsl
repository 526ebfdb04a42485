<?xml version="1.0" encoding="UTF-8"?>
<!--
  xsl/job-collectors.xsl - tapestry job description to the collector plan:
  one line per collector in start order (the root collector first, each
  parent before its children, depth first in document order):
    NAME host=HOST address=ADDRESS parent=PARENT|manager port=PORT|auto launcher=L
  `tapestry launch` starts them in this order and stops them in reverse.
-->
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="text" encoding="UTF-8"/>
  <xsl:template match="/job">
    <xsl:text># tapestry job </xsl:text>
    <xsl:value-of select="@name"/>
    <xsl:text>: collector plan, start order (stop in reverse)&#10;</xsl:text>
    <xsl:apply-templates select="collectors/collector[not(@parent)]"/>
  </xsl:template>
  <xsl:template match="collector">
    <xsl:variable name="hn" select="@host"/>
    <xsl:variable name="h" select="/job/hosts/host[@name = $hn]"/>
    <xsl:variable name="me" select="@name"/>
    <xsl:value-of select="@name"/>
    <xsl:text> host=</xsl:text><xsl:value-of select="@host"/>
    <xsl:text> address=</xsl:text>
    <xsl:choose>
      <xsl:when test="$h/@address"><xsl:value-of select="$h/@address"/></xsl:when>
      <xsl:otherwise><xsl:value-of select="@host"/></xsl:otherwise>
    </xsl:choose>
    <xsl:text> parent=</xsl:text>
    <xsl:choose>
      <xsl:when test="@parent"><xsl:value-of select="@parent"/></xsl:when>
      <xsl:otherwise>manager</xsl:otherwise>
    </xsl:choose>
    <xsl:text> port=</xsl:text>
    <xsl:choose>
      <xsl:when test="@port and @port != 0"><xsl:value-of select="@port"/></xsl:when>
      <xsl:otherwise>auto</xsl:otherwise>
    </xsl:choose>
    <xsl:text> launcher=</xsl:text>
    <xsl:choose>
      <xsl:when test="$h/@launcher"><xsl:value-of select="$h/@launcher"/></xsl:when>
      <xsl:otherwise>local</xsl:otherwise>
    </xsl:choose>
    <xsl:text>&#10;</xsl:text>
    <xsl:apply-templates select="/job/collectors/collector[@parent = $me]"/>
  </xsl:template>
</xsl:stylesheet>
