extension Duration {
    /// Whole nanoseconds, for Dispatch.
    var nanoseconds: Int {
        let (s, atto) = components
        return Int(s) * 1_000_000_000 + Int(atto / 1_000_000_000)
    }
}
