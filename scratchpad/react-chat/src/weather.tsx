/**
 * The app's client-side tool and generative component: `get_weather`
 * (made-up weather) and `WeatherCard`, whose props stream in.
 */
import { type TamboComponent, type TamboTool, useTamboStreamStatus } from "@tambo-effect/react"
import * as Schema from "effect/Schema"
import { FavouriteToggle } from "./favourite.js"

const CONDITIONS = ["sunny", "cloudy", "rainy", "windy", "snowy", "foggy"] as const

/** The same made-up weather for the same city, every time. */
const madeUpWeather = (city: string) => {
  let hash = 0
  for (const char of city.toLowerCase()) hash = (hash * 31 + char.charCodeAt(0)) >>> 0
  return {
    city,
    temperature: (hash % 35) - 5,
    conditions: CONDITIONS[hash % CONDITIONS.length]!,
    humidity: 30 + (hash % 60)
  }
}

const WeatherInput = Schema.Struct({ city: Schema.String })

export const getWeather: TamboTool<typeof WeatherInput.Type> = {
  name: "get_weather",
  description: "Gets the current weather in a city",
  inputSchema: WeatherInput,
  tool: async ({ city }) => {
    // A little latency, as a real weather service would have.
    await new Promise((resolve) => setTimeout(resolve, 150))
    return madeUpWeather(city)
  }
}

const WeatherProps = Schema.Struct({
  city: Schema.String,
  temperature: Schema.Number,
  conditions: Schema.String,
  humidity: Schema.optional(Schema.Number)
})
type WeatherProps = typeof WeatherProps.Type

const ICONS: Record<string, string> = { sunny: "☀️", cloudy: "☁️", rainy: "🌧️", windy: "🌬️", snowy: "❄️", foggy: "🌫️" }

function WeatherCardView({ city, conditions, humidity, temperature }: WeatherProps) {
  const { streamStatus } = useTamboStreamStatus<WeatherProps>()
  return (
    <div className="weather-card" data-testid="weather-card" data-complete={String(streamStatus.isSuccess)}>
      <div className="weather-icon">{ICONS[conditions] ?? "🌡️"}</div>
      <div>
        <div className="weather-city" data-testid="weather-city">{city}</div>
        <div className="weather-temperature" data-testid="weather-temperature">{temperature}°C</div>
        <div className="weather-conditions" data-testid="weather-conditions">
          {conditions}
          {humidity === undefined ? null : `, ${humidity}% humidity`}
        </div>
      </div>
      <FavouriteToggle city={city} />
    </div>
  )
}

function WeatherCardLoading({ city, temperature }: Partial<WeatherProps>) {
  return (
    <div className="weather-card loading" data-testid="weather-card-loading">
      <div className="weather-icon">…</div>
      <div>
        <div className="weather-city">{city ?? "…"}</div>
        <div className="weather-temperature">{temperature === undefined ? "" : `${temperature}°C`}</div>
      </div>
    </div>
  )
}

export const WeatherCard: TamboComponent<WeatherProps> = {
  name: "WeatherCard",
  description: "Shows the current weather in a city: temperature in °C, conditions and humidity",
  propsSchema: WeatherProps,
  component: WeatherCardView,
  loadingComponent: WeatherCardLoading
}
