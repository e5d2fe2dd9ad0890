#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Prints reachabilityd's status with busctl and tells it by the exit status: 0 reachable,
# 1 not reachable (or unknown), 69 reachabilityd not running. The system bus is
# $DBUS_SYSTEM_BUS_ADDRESS when set.
#   sh reachability-status.sh && echo "online"
reply=$(busctl get-property org.reachabilityd.Reachability1 /org/reachabilityd/Reachability1 \
    org.reachabilityd.Reachability1 Status 2>/dev/null) || { echo "reachabilityd is not running" >&2; exit 69; }
status=${reply#s \"}
status=${status%\"}
echo "$status"
case $status in
    reachable-via-*) exit 0 ;;
    *) exit 1 ;;
esac
