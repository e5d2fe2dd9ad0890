/* SPDX-License-Identifier: Apache-2.0
 *
 * The strings of reachabilityd's D-Bus API v1 that the GIO module uses. The source of truth is
 * dbus/org.reachabilityd.Reachability1.xml; BusContractTests (Tests/ReachabilityCoreTests) reads
 * this header and checks every value against that file and ReachabilityCore's own names, so a
 * rename breaks the test rather than the module. One `#define NAME "value"` per line.
 */
#ifndef REACHABILITYD_CONTRACT_H
#define REACHABILITYD_CONTRACT_H

#define REACHABILITYD_BUS_NAME "org.reachabilityd.Reachability1"
#define REACHABILITYD_OBJECT_PATH "/org/reachabilityd/Reachability1"
#define REACHABILITYD_INTERFACE "org.reachabilityd.Reachability1"

#define REACHABILITYD_PROPERTY_STATUS "Status"
#define REACHABILITYD_PROPERTY_REACHABLE "Reachable"
#define REACHABILITYD_PROPERTY_METERED "Metered"
#define REACHABILITYD_PROPERTY_CONNECTIVITY "Connectivity"

#define REACHABILITYD_SIGNAL_STATUS_CHANGED "StatusChanged"

#define REACHABILITYD_METHOD_CHECK_ADDRESS "CheckAddress"
#define REACHABILITYD_METHOD_CHECK_DESTINATION "CheckDestination"
/* The keys of CheckDestination's answer that the module reads, and the path it refuses to an
 * IPv4 address (an application connects to the literal, not to its NAT64 address). */
#define REACHABILITYD_DESTINATION_STATUS "status"
#define REACHABILITYD_DESTINATION_VIA "via"
#define REACHABILITYD_VIA_NAT64 "nat64"

/* CheckAddress's and CheckDestination's errors. */
#define REACHABILITYD_ERROR_INVALID_ADDRESS "org.reachabilityd.Error.InvalidAddress"
#define REACHABILITYD_ERROR_BUSY "org.reachabilityd.Error.Busy"

/* Status values that mean "no route"; every other status is reachable-via-something. */
#define REACHABILITYD_STATUS_UNKNOWN "unknown"
#define REACHABILITYD_STATUS_NOT_REACHABLE "not-reachable"

/* Connectivity values. */
#define REACHABILITYD_CONNECTIVITY_NONE "none"
#define REACHABILITYD_CONNECTIVITY_UNKNOWN "unknown"
#define REACHABILITYD_CONNECTIVITY_LIMITED "limited"
#define REACHABILITYD_CONNECTIVITY_PORTAL "portal"
#define REACHABILITYD_CONNECTIVITY_FULL "full"

#endif
