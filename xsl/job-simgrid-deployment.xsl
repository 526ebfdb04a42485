<?xml version="1.0" encoding="UTF-8"?>
<!--
  xsl/job-simgrid-deployment.xsl - tapestry job description to a SimGrid
  deployment: one actor per rank, as smpirun writes them (function = rank,
  properties instance_id and rank), on the host the launcher puts that rank:
  ranks fill each host's slots in document order, then wrap (folding).
-->
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="xml" indent="yes" encoding="UTF-8"
              doctype-system="https://simgrid.org/simgrid.dtd"/>

  <xsl:template match="/job">
    <platform version="4.1">
      <xsl:call-template name="rank">
        <xsl:with-param name="r" select="0"/>
        <xsl:with-param name="n" select="application/@processes"/>
        <xsl:with-param name="total" select="sum(hosts/host/@slots)"/>
      </xsl:call-template>
    </platform>
  </xsl:template>

  <!-- host of slot k: the first host whose cumulative slots exceed k -->
  <xsl:template name="host-of">
    <xsl:param name="k"/>
    <xsl:param name="i" select="1"/>
    <xsl:variable name="h" select="/job/hosts/host[@slots &gt; 0][$i]"/>
    <xsl:choose>
      <xsl:when test="not($h)"/>
      <xsl:when test="$k &lt; $h/@slots"><xsl:value-of select="$h/@name"/></xsl:when>
      <xsl:otherwise>
        <xsl:call-template name="host-of">
          <xsl:with-param name="k" select="$k - $h/@slots"/>
          <xsl:with-param name="i" select="$i + 1"/>
        </xsl:call-template>
      </xsl:otherwise>
    </xsl:choose>
  </xsl:template>

  <xsl:template name="rank">
    <xsl:param name="r"/>
    <xsl:param name="n"/>
    <xsl:param name="total"/>
    <xsl:if test="$r &lt; $n and $total &gt; 0">
      <xsl:variable name="host">
        <xsl:call-template name="host-of"><xsl:with-param name="k" select="$r mod $total"/></xsl:call-template>
      </xsl:variable>
      <actor host="{$host}" function="{$r}">
        <prop id="instance_id" value="smpirun"/>
        <prop id="rank" value="{$r}"/>
      </actor>
      <xsl:call-template name="rank">
        <xsl:with-param name="r" select="$r + 1"/>
        <xsl:with-param name="n" select="$n"/>
        <xsl:with-param name="total" select="$total"/>
      </xsl:call-template>
    </xsl:if>
  </xsl:template>
</xsl:stylesheet>
