/// The release of vendd and vendctl, printed by `vendd --version` and `vendctl --version`.
/// The one place it is written: scripts/build-deb reads it from here for the package's version
/// (with a `~git` suffix between releases), and a release is tagged `v` + this string.
public let venddVersion = "0.1.0"
