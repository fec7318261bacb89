extension Machine {
    /// A price line set at run time (`vendctl price SLOT AMOUNT --list N --payment P`); nil goes
    /// back to the file's line. List 1 for every payment is the slot's own price (`setPrice`).
    /// The file's rules apply: a list the file names, a price some credit could pay.
    mutating func setPriceLine(_ slotID: SlotID, list: PriceListNumber, scope: PriceScope, price newPrice: Money?, into effects: inout Effects) {
        if list == .standardList, scope == .any { return setPrice(slotID, newPrice, into: &effects) }
        guard let slot = setup.slot(slotID) else { return effects.reject(.unknownSlot(slotID)) }
        guard list == .standardList || setup.pricing.lists[list] != nil else {
            return effects.reject(.unknownPriceList(list, known: setup.pricing.lists.keys.sorted()))
        }
        if let newPrice, let problem = setup.priceProblem(newPrice) {
            guard case .aboveMaximumCredit = problem else { return effects.reject(.invalidPrice(newPrice)) }
            return effects.reject(.priceRefused(slotID, newPrice, problem))
        }
        let configured = slot.priceLines.first { $0.list == list && $0.scope == scope }?.price
        var lines = priceLineOverrides[slotID] ?? []
        let old = lines.first { $0.line.list == list && $0.line.scope == scope }?.line.price ?? configured
        lines.removeAll { $0.line.list == list && $0.line.scope == scope }
        if let newPrice, newPrice != configured {
            lines.append(PriceLineOverride(line: PriceLine(list: list, scope: scope, price: newPrice), replacedConfiguredPrice: configured))
            lines.sort { ($0.line.list, $0.line.scope.rawValue) < ($1.line.list, $1.line.scope.rawValue) }
        }
        priceLineOverrides[slotID] = lines.isEmpty ? nil : lines
        let new = newPrice ?? configured
        if new != old { effects.emit(.priceLineChanged(slot: slotID, list: list, scope: scope, from: old, to: new)) }
    }

    /// After a new setup: a line set at run time goes when its slot or list did, or when the
    /// file's line it replaced was edited since (the newer intent wins).
    mutating func dropOverriddenPriceLines(into effects: inout Effects) {
        for (slotID, lines) in priceLineOverrides.sorted(by: { $0.key < $1.key }) {
            let slot = setup.slot(slotID)
            let kept = lines.filter { override in
                let line = override.line
                let configured = slot?.priceLines.first { $0.list == line.list && $0.scope == line.scope }?.price
                let stays =
                    slot != nil && configured == override.replacedConfiguredPrice
                    && (line.list == .standardList || setup.pricing.lists[line.list] != nil)
                if !stays, slot != nil {
                    effects.emit(.priceLineChanged(slot: slotID, list: line.list, scope: line.scope, from: line.price, to: configured))
                }
                return stays
            }
            priceLineOverrides[slotID] = kept.isEmpty ? nil : kept
        }
    }
}
