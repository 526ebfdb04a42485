<?xml version="1.0" encoding="UTF-8"?>
<!--
  xsl/job-simgrid-hostfile.xsl - tapestry job description to a hostfile for
  `smpirun -hostfile`: the host name (as in platform.xml) once per slot,
  hosts in document order, so rank r lands where mpirun put it.
-->
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="text" encoding="UTF-8"/>
  <xsl:template match="/job">
    <xsl:for-each select="hosts/host[@slots &gt; 0]">
      <xsl:call-template name="repeat">
        <xsl:with-param name="name" select="@name"/>
        <xsl:with-param name="n" select="@slots"/>
      </xsl:call-template>
    </xsl:for-each>
  </xsl:template>
  <xsl:template name="repeat">
    <xsl:param name="name"/>
    <xsl:param name="n"/>
    <xsl:if test="$n &gt; 0">
      <xsl:value-of select="$name"/>
      <xsl:text>&#10;</xsl:text>
      <xsl:call-template name="repeat">
        <xsl:with-param name="name" select="$name"/>
        <xsl:with-param name="n" select="$n - 1"/>
      </xsl:call-template>
    </xsl:if>
  </xsl:template>
</xsl:stylesheet>
