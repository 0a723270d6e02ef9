package picture

// The labels of the three other languages players use, as an adapter's catalog would give them.
var (
	luxembourgish = Labels{
		Title: "Lee", TeamA: "Ekipp A", TeamB: "Ekipp B", Seat: "Plaz",
		Open: "op", Crossed: "duerchgestrach", Added: "bäigesat",
		Game: "Spill", Trump: "Tromp", Calls: "Gesot", Points: "Punkten", Stripes: "Stréchen",
		Winner: "Gewënner", Draw: "Stänner", Earlier: "méi fréi Spiller", NoGames: "Nach keng Spiller",
		Trick: "Streech", LastTrick: "Leschte Streech", Turn: "Un der Rei", Cards: "Kaarten",
		OpenOne: "op", CrossedOne: "duerchgestrach", AddedOne: "bäigesat", EarlierOne: "méi fréit Spill", One: 1 << 1,
		Standings: "Klassement", Player: "Spiller", Rating: "Bewäertung", Won: "Gewonnen", Played: "Gespillt",
		Provisional: "provisoresch", NoMatches: "Nach keng Partie ofgeschloss", Colon: ": ",
	}
	german = Labels{
		Title: "Strichliste", TeamA: "Team A", TeamB: "Team B", Seat: "Platz",
		Open: "offen", Crossed: "gestrichen", Added: "dazugekommen",
		Game: "Spiel", Trump: "Trumpf", Calls: "Ansagen", Points: "Punkte", Stripes: "Striche",
		Winner: "Sieger", Draw: "Gleichstand", Earlier: "frühere Spiele", NoGames: "Noch keine Spiele",
		Trick: "Stich", LastTrick: "Letzter Stich", Turn: "Am Zug", Cards: "Karten",
		OpenOne: "offen", CrossedOne: "gestrichen", AddedOne: "dazugekommen", EarlierOne: "früheres Spiel", One: 1 << 1,
		Standings: "Tabelle", Player: "Spieler", Rating: "Wertung", Won: "Gewonnen", Played: "Gespielt",
		Provisional: "vorläufig", NoMatches: "Noch keine Partie beendet", Colon: ": ",
	}
	french = Labels{
		Title: "Feuille de marque", TeamA: "Équipe A", TeamB: "Équipe B", Seat: "Place",
		Open: "ouverts", Crossed: "barrés", Added: "ajoutés",
		Game: "Partie", Trump: "Atout", Calls: "Annonces", Points: "Points", Stripes: "Traits",
		Winner: "Gagnant", Draw: "Égalité", Earlier: "parties précédentes", NoGames: "Pas encore de partie",
		Trick: "Pli", LastTrick: "Dernier pli", Turn: "À jouer", Cards: "cartes",
		OpenOne: "ouvert", CrossedOne: "barré", AddedOne: "ajouté", EarlierOne: "partie précédente", One: 1<<0 | 1<<1,
		Standings: "Classement", Player: "Joueur", Rating: "Cote", Won: "Gagnées", Played: "Jouées",
		Provisional: "provisoire", NoMatches: "Aucune partie finie", Colon: "\u00a0: ",
	}
)
