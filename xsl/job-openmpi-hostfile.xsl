<?xml version="1.0" encoding="UTF-8"?>
<!--
  xsl/job-openmpi-hostfile.xsl - tapestry job description (share/jobdesc.rng)
  to an Open MPI hostfile: one line "ADDRESS slots=N" per host that declares
  slots, in document order (mpirun fills them in that order).
-->
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="text" encoding="UTF-8"/>
  <xsl:template match="/job">
    <xsl:text># tapestry job </xsl:text>
    <xsl:value-of select="@name"/>
    <xsl:text>: Open MPI hostfile (mpirun.openmpi --hostfile)&#10;</xsl:text>
    <xsl:for-each select="hosts/host[@slots &gt; 0]">
      <xsl:choose>
        <xsl:when test="@address"><xsl:value-of select="@address"/></xsl:when>
        <xsl:otherwise><xsl:value-of select="@name"/></xsl:otherwise>
      </xsl:choose>
      <xsl:text> slots=</xsl:text>
      <xsl:value-of select="@slots"/>
      <xsl:text>&#10;</xsl:text>
    </xsl:for-each>
  </xsl:template>
</xsl:stylesheet>
