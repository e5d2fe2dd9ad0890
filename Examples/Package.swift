// swift-tools-version:6.0
// A separate package that uses ReachabilityClient the way a service would: by dependency only.
import Foundation
import PackageDescription

// A path dependency's identity is its directory's name ("reachabilityd" in a plain clone).
let repository = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "ReachabilityExample",
    dependencies: [
        .package(path: ".."),
    ],
    targets: [
        .executableTarget(name: "ReachabilityExample", dependencies: [
            .product(name: "ReachabilityNotifications", package: repository),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
