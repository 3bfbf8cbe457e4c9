#!/bin/sh
# Configures NTP: NTP (café, naïve — UTF-8 text stays as it is)
set -eu
echo "servers: NTP" > /etc/ntp.servers
