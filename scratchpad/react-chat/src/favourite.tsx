/**
 * A favourite toggle for the `WeatherCard`: the card's own state, kept on
 * the server with `useTamboComponentState`, so it survives a reload and a
 * switch of threads (and the model sees which cities are favourites).
 */
import { useTamboComponentState } from "@tambo-effect/react"
import "./favourite.css"

export function FavouriteToggle({ city }: { readonly city: string }) {
  const [favourite, setFavourite, { error, isPending }] = useTamboComponentState("favourite", false)
  return (
    <button
      type="button"
      className="favourite"
      data-testid="favourite"
      data-pending={String(isPending)}
      aria-pressed={favourite}
      aria-label={favourite ? `Remove ${city} from favourites` : `Add ${city} to favourites`}
      title={error === null ? undefined : `Not saved: ${error.message}`}
      onClick={() => setFavourite((previous) => !previous)}
    >
      {favourite ? "★" : "☆"}
    </button>
  )
}
