<?xml version="1.0" encoding="UTF-8"?>
<!--
  xsl/simgrid-hostfile.xsl - tapestry's job description for SimGrid
  (tapestry-simgrid) to the hostfile smpirun -hostfile takes: one host per
  line, in rank order (rank N runs on the Nth line).
-->
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="text" encoding="UTF-8"/>

  <xsl:template match="/tapestry-simgrid">
    <xsl:for-each select="host">
      <xsl:sort select="@rank" data-type="number"/>
      <xsl:value-of select="@id"/>
      <xsl:text>&#10;</xsl:text>
    </xsl:for-each>
  </xsl:template>
</xsl:stylesheet>
