package graph_test

// Code written by a script for the large-state test: a state of 300 int
// fields and an accessor per field.

// big is a state type of 300 fields.
type big struct {
	F000 int
	F001 int
	F002 int
	F003 int
	F004 int
	F005 int
	F006 int
	F007 int
	F008 int
	F009 int
	F010 int
	F011 int
	F012 int
	F013 int
	F014 int
	F015 int
	F016 int
	F017 int
	F018 int
	F019 int
	F020 int
	F021 int
	F022 int
	F023 int
	F024 int
	F025 int
	F026 int
	F027 int
	F028 int
	F029 int
	F030 int
	F031 int
	F032 int
	F033 int
	F034 int
	F035 int
	F036 int
	F037 int
	F038 int
	F039 int
	F040 int
	F041 int
	F042 int
	F043 int
	F044 int
	F045 int
	F046 int
	F047 int
	F048 int
	F049 int
	F050 int
	F051 int
	F052 int
	F053 int
	F054 int
	F055 int
	F056 int
	F057 int
	F058 int
	F059 int
	F060 int
	F061 int
	F062 int
	F063 int
	F064 int
	F065 int
	F066 int
	F067 int
	F068 int
	F069 int
	F070 int
	F071 int
	F072 int
	F073 int
	F074 int
	F075 int
	F076 int
	F077 int
	F078 int
	F079 int
	F080 int
	F081 int
	F082 int
	F083 int
	F084 int
	F085 int
	F086 int
	F087 int
	F088 int
	F089 int
	F090 int
	F091 int
	F092 int
	F093 int
	F094 int
	F095 int
	F096 int
	F097 int
	F098 int
	F099 int
	F100 int
	F101 int
	F102 int
	F103 int
	F104 int
	F105 int
	F106 int
	F107 int
	F108 int
	F109 int
	F110 int
	F111 int
	F112 int
	F113 int
	F114 int
	F115 int
	F116 int
	F117 int
	F118 int
	F119 int
	F120 int
	F121 int
	F122 int
	F123 int
	F124 int
	F125 int
	F126 int
	F127 int
	F128 int
	F129 int
	F130 int
	F131 int
	F132 int
	F133 int
	F134 int
	F135 int
	F136 int
	F137 int
	F138 int
	F139 int
	F140 int
	F141 int
	F142 int
	F143 int
	F144 int
	F145 int
	F146 int
	F147 int
	F148 int
	F149 int
	F150 int
	F151 int
	F152 int
	F153 int
	F154 int
	F155 int
	F156 int
	F157 int
	F158 int
	F159 int
	F160 int
	F161 int
	F162 int
	F163 int
	F164 int
	F165 int
	F166 int
	F167 int
	F168 int
	F169 int
	F170 int
	F171 int
	F172 int
	F173 int
	F174 int
	F175 int
	F176 int
	F177 int
	F178 int
	F179 int
	F180 int
	F181 int
	F182 int
	F183 int
	F184 int
	F185 int
	F186 int
	F187 int
	F188 int
	F189 int
	F190 int
	F191 int
	F192 int
	F193 int
	F194 int
	F195 int
	F196 int
	F197 int
	F198 int
	F199 int
	F200 int
	F201 int
	F202 int
	F203 int
	F204 int
	F205 int
	F206 int
	F207 int
	F208 int
	F209 int
	F210 int
	F211 int
	F212 int
	F213 int
	F214 int
	F215 int
	F216 int
	F217 int
	F218 int
	F219 int
	F220 int
	F221 int
	F222 int
	F223 int
	F224 int
	F225 int
	F226 int
	F227 int
	F228 int
	F229 int
	F230 int
	F231 int
	F232 int
	F233 int
	F234 int
	F235 int
	F236 int
	F237 int
	F238 int
	F239 int
	F240 int
	F241 int
	F242 int
	F243 int
	F244 int
	F245 int
	F246 int
	F247 int
	F248 int
	F249 int
	F250 int
	F251 int
	F252 int
	F253 int
	F254 int
	F255 int
	F256 int
	F257 int
	F258 int
	F259 int
	F260 int
	F261 int
	F262 int
	F263 int
	F264 int
	F265 int
	F266 int
	F267 int
	F268 int
	F269 int
	F270 int
	F271 int
	F272 int
	F273 int
	F274 int
	F275 int
	F276 int
	F277 int
	F278 int
	F279 int
	F280 int
	F281 int
	F282 int
	F283 int
	F284 int
	F285 int
	F286 int
	F287 int
	F288 int
	F289 int
	F290 int
	F291 int
	F292 int
	F293 int
	F294 int
	F295 int
	F296 int
	F297 int
	F298 int
	F299 int
}

// bigAcc holds an accessor per field of big, in field order.
var bigAcc = []func(s *big) *int{
	func(s *big) *int { return &s.F000 },
	func(s *big) *int { return &s.F001 },
	func(s *big) *int { return &s.F002 },
	func(s *big) *int { return &s.F003 },
	func(s *big) *int { return &s.F004 },
	func(s *big) *int { return &s.F005 },
	func(s *big) *int { return &s.F006 },
	func(s *big) *int { return &s.F007 },
	func(s *big) *int { return &s.F008 },
	func(s *big) *int { return &s.F009 },
	func(s *big) *int { return &s.F010 },
	func(s *big) *int { return &s.F011 },
	func(s *big) *int { return &s.F012 },
	func(s *big) *int { return &s.F013 },
	func(s *big) *int { return &s.F014 },
	func(s *big) *int { return &s.F015 },
	func(s *big) *int { return &s.F016 },
	func(s *big) *int { return &s.F017 },
	func(s *big) *int { return &s.F018 },
	func(s *big) *int { return &s.F019 },
	func(s *big) *int { return &s.F020 },
	func(s *big) *int { return &s.F021 },
	func(s *big) *int { return &s.F022 },
	func(s *big) *int { return &s.F023 },
	func(s *big) *int { return &s.F024 },
	func(s *big) *int { return &s.F025 },
	func(s *big) *int { return &s.F026 },
	func(s *big) *int { return &s.F027 },
	func(s *big) *int { return &s.F028 },
	func(s *big) *int { return &s.F029 },
	func(s *big) *int { return &s.F030 },
	func(s *big) *int { return &s.F031 },
	func(s *big) *int { return &s.F032 },
	func(s *big) *int { return &s.F033 },
	func(s *big) *int { return &s.F034 },
	func(s *big) *int { return &s.F035 },
	func(s *big) *int { return &s.F036 },
	func(s *big) *int { return &s.F037 },
	func(s *big) *int { return &s.F038 },
	func(s *big) *int { return &s.F039 },
	func(s *big) *int { return &s.F040 },
	func(s *big) *int { return &s.F041 },
	func(s *big) *int { return &s.F042 },
	func(s *big) *int { return &s.F043 },
	func(s *big) *int { return &s.F044 },
	func(s *big) *int { return &s.F045 },
	func(s *big) *int { return &s.F046 },
	func(s *big) *int { return &s.F047 },
	func(s *big) *int { return &s.F048 },
	func(s *big) *int { return &s.F049 },
	func(s *big) *int { return &s.F050 },
	func(s *big) *int { return &s.F051 },
	func(s *big) *int { return &s.F052 },
	func(s *big) *int { return &s.F053 },
	func(s *big) *int { return &s.F054 },
	func(s *big) *int { return &s.F055 },
	func(s *big) *int { return &s.F056 },
	func(s *big) *int { return &s.F057 },
	func(s *big) *int { return &s.F058 },
	func(s *big) *int { return &s.F059 },
	func(s *big) *int { return &s.F060 },
	func(s *big) *int { return &s.F061 },
	func(s *big) *int { return &s.F062 },
	func(s *big) *int { return &s.F063 },
	func(s *big) *int { return &s.F064 },
	func(s *big) *int { return &s.F065 },
	func(s *big) *int { return &s.F066 },
	func(s *big) *int { return &s.F067 },
	func(s *big) *int { return &s.F068 },
	func(s *big) *int { return &s.F069 },
	func(s *big) *int { return &s.F070 },
	func(s *big) *int { return &s.F071 },
	func(s *big) *int { return &s.F072 },
	func(s *big) *int { return &s.F073 },
	func(s *big) *int { return &s.F074 },
	func(s *big) *int { return &s.F075 },
	func(s *big) *int { return &s.F076 },
	func(s *big) *int { return &s.F077 },
	func(s *big) *int { return &s.F078 },
	func(s *big) *int { return &s.F079 },
	func(s *big) *int { return &s.F080 },
	func(s *big) *int { return &s.F081 },
	func(s *big) *int { return &s.F082 },
	func(s *big) *int { return &s.F083 },
	func(s *big) *int { return &s.F084 },
	func(s *big) *int { return &s.F085 },
	func(s *big) *int { return &s.F086 },
	func(s *big) *int { return &s.F087 },
	func(s *big) *int { return &s.F088 },
	func(s *big) *int { return &s.F089 },
	func(s *big) *int { return &s.F090 },
	func(s *big) *int { return &s.F091 },
	func(s *big) *int { return &s.F092 },
	func(s *big) *int { return &s.F093 },
	func(s *big) *int { return &s.F094 },
	func(s *big) *int { return &s.F095 },
	func(s *big) *int { return &s.F096 },
	func(s *big) *int { return &s.F097 },
	func(s *big) *int { return &s.F098 },
	func(s *big) *int { return &s.F099 },
	func(s *big) *int { return &s.F100 },
	func(s *big) *int { return &s.F101 },
	func(s *big) *int { return &s.F102 },
	func(s *big) *int { return &s.F103 },
	func(s *big) *int { return &s.F104 },
	func(s *big) *int { return &s.F105 },
	func(s *big) *int { return &s.F106 },
	func(s *big) *int { return &s.F107 },
	func(s *big) *int { return &s.F108 },
	func(s *big) *int { return &s.F109 },
	func(s *big) *int { return &s.F110 },
	func(s *big) *int { return &s.F111 },
	func(s *big) *int { return &s.F112 },
	func(s *big) *int { return &s.F113 },
	func(s *big) *int { return &s.F114 },
	func(s *big) *int { return &s.F115 },
	func(s *big) *int { return &s.F116 },
	func(s *big) *int { return &s.F117 },
	func(s *big) *int { return &s.F118 },
	func(s *big) *int { return &s.F119 },
	func(s *big) *int { return &s.F120 },
	func(s *big) *int { return &s.F121 },
	func(s *big) *int { return &s.F122 },
	func(s *big) *int { return &s.F123 },
	func(s *big) *int { return &s.F124 },
	func(s *big) *int { return &s.F125 },
	func(s *big) *int { return &s.F126 },
	func(s *big) *int { return &s.F127 },
	func(s *big) *int { return &s.F128 },
	func(s *big) *int { return &s.F129 },
	func(s *big) *int { return &s.F130 },
	func(s *big) *int { return &s.F131 },
	func(s *big) *int { return &s.F132 },
	func(s *big) *int { return &s.F133 },
	func(s *big) *int { return &s.F134 },
	func(s *big) *int { return &s.F135 },
	func(s *big) *int { return &s.F136 },
	func(s *big) *int { return &s.F137 },
	func(s *big) *int { return &s.F138 },
	func(s *big) *int { return &s.F139 },
	func(s *big) *int { return &s.F140 },
	func(s *big) *int { return &s.F141 },
	func(s *big) *int { return &s.F142 },
	func(s *big) *int { return &s.F143 },
	func(s *big) *int { return &s.F144 },
	func(s *big) *int { return &s.F145 },
	func(s *big) *int { return &s.F146 },
	func(s *big) *int { return &s.F147 },
	func(s *big) *int { return &s.F148 },
	func(s *big) *int { return &s.F149 },
	func(s *big) *int { return &s.F150 },
	func(s *big) *int { return &s.F151 },
	func(s *big) *int { return &s.F152 },
	func(s *big) *int { return &s.F153 },
	func(s *big) *int { return &s.F154 },
	func(s *big) *int { return &s.F155 },
	func(s *big) *int { return &s.F156 },
	func(s *big) *int { return &s.F157 },
	func(s *big) *int { return &s.F158 },
	func(s *big) *int { return &s.F159 },
	func(s *big) *int { return &s.F160 },
	func(s *big) *int { return &s.F161 },
	func(s *big) *int { return &s.F162 },
	func(s *big) *int { return &s.F163 },
	func(s *big) *int { return &s.F164 },
	func(s *big) *int { return &s.F165 },
	func(s *big) *int { return &s.F166 },
	func(s *big) *int { return &s.F167 },
	func(s *big) *int { return &s.F168 },
	func(s *big) *int { return &s.F169 },
	func(s *big) *int { return &s.F170 },
	func(s *big) *int { return &s.F171 },
	func(s *big) *int { return &s.F172 },
	func(s *big) *int { return &s.F173 },
	func(s *big) *int { return &s.F174 },
	func(s *big) *int { return &s.F175 },
	func(s *big) *int { return &s.F176 },
	func(s *big) *int { return &s.F177 },
	func(s *big) *int { return &s.F178 },
	func(s *big) *int { return &s.F179 },
	func(s *big) *int { return &s.F180 },
	func(s *big) *int { return &s.F181 },
	func(s *big) *int { return &s.F182 },
	func(s *big) *int { return &s.F183 },
	func(s *big) *int { return &s.F184 },
	func(s *big) *int { return &s.F185 },
	func(s *big) *int { return &s.F186 },
	func(s *big) *int { return &s.F187 },
	func(s *big) *int { return &s.F188 },
	func(s *big) *int { return &s.F189 },
	func(s *big) *int { return &s.F190 },
	func(s *big) *int { return &s.F191 },
	func(s *big) *int { return &s.F192 },
	func(s *big) *int { return &s.F193 },
	func(s *big) *int { return &s.F194 },
	func(s *big) *int { return &s.F195 },
	func(s *big) *int { return &s.F196 },
	func(s *big) *int { return &s.F197 },
	func(s *big) *int { return &s.F198 },
	func(s *big) *int { return &s.F199 },
	func(s *big) *int { return &s.F200 },
	func(s *big) *int { return &s.F201 },
	func(s *big) *int { return &s.F202 },
	func(s *big) *int { return &s.F203 },
	func(s *big) *int { return &s.F204 },
	func(s *big) *int { return &s.F205 },
	func(s *big) *int { return &s.F206 },
	func(s *big) *int { return &s.F207 },
	func(s *big) *int { return &s.F208 },
	func(s *big) *int { return &s.F209 },
	func(s *big) *int { return &s.F210 },
	func(s *big) *int { return &s.F211 },
	func(s *big) *int { return &s.F212 },
	func(s *big) *int { return &s.F213 },
	func(s *big) *int { return &s.F214 },
	func(s *big) *int { return &s.F215 },
	func(s *big) *int { return &s.F216 },
	func(s *big) *int { return &s.F217 },
	func(s *big) *int { return &s.F218 },
	func(s *big) *int { return &s.F219 },
	func(s *big) *int { return &s.F220 },
	func(s *big) *int { return &s.F221 },
	func(s *big) *int { return &s.F222 },
	func(s *big) *int { return &s.F223 },
	func(s *big) *int { return &s.F224 },
	func(s *big) *int { return &s.F225 },
	func(s *big) *int { return &s.F226 },
	func(s *big) *int { return &s.F227 },
	func(s *big) *int { return &s.F228 },
	func(s *big) *int { return &s.F229 },
	func(s *big) *int { return &s.F230 },
	func(s *big) *int { return &s.F231 },
	func(s *big) *int { return &s.F232 },
	func(s *big) *int { return &s.F233 },
	func(s *big) *int { return &s.F234 },
	func(s *big) *int { return &s.F235 },
	func(s *big) *int { return &s.F236 },
	func(s *big) *int { return &s.F237 },
	func(s *big) *int { return &s.F238 },
	func(s *big) *int { return &s.F239 },
	func(s *big) *int { return &s.F240 },
	func(s *big) *int { return &s.F241 },
	func(s *big) *int { return &s.F242 },
	func(s *big) *int { return &s.F243 },
	func(s *big) *int { return &s.F244 },
	func(s *big) *int { return &s.F245 },
	func(s *big) *int { return &s.F246 },
	func(s *big) *int { return &s.F247 },
	func(s *big) *int { return &s.F248 },
	func(s *big) *int { return &s.F249 },
	func(s *big) *int { return &s.F250 },
	func(s *big) *int { return &s.F251 },
	func(s *big) *int { return &s.F252 },
	func(s *big) *int { return &s.F253 },
	func(s *big) *int { return &s.F254 },
	func(s *big) *int { return &s.F255 },
	func(s *big) *int { return &s.F256 },
	func(s *big) *int { return &s.F257 },
	func(s *big) *int { return &s.F258 },
	func(s *big) *int { return &s.F259 },
	func(s *big) *int { return &s.F260 },
	func(s *big) *int { return &s.F261 },
	func(s *big) *int { return &s.F262 },
	func(s *big) *int { return &s.F263 },
	func(s *big) *int { return &s.F264 },
	func(s *big) *int { return &s.F265 },
	func(s *big) *int { return &s.F266 },
	func(s *big) *int { return &s.F267 },
	func(s *big) *int { return &s.F268 },
	func(s *big) *int { return &s.F269 },
	func(s *big) *int { return &s.F270 },
	func(s *big) *int { return &s.F271 },
	func(s *big) *int { return &s.F272 },
	func(s *big) *int { return &s.F273 },
	func(s *big) *int { return &s.F274 },
	func(s *big) *int { return &s.F275 },
	func(s *big) *int { return &s.F276 },
	func(s *big) *int { return &s.F277 },
	func(s *big) *int { return &s.F278 },
	func(s *big) *int { return &s.F279 },
	func(s *big) *int { return &s.F280 },
	func(s *big) *int { return &s.F281 },
	func(s *big) *int { return &s.F282 },
	func(s *big) *int { return &s.F283 },
	func(s *big) *int { return &s.F284 },
	func(s *big) *int { return &s.F285 },
	func(s *big) *int { return &s.F286 },
	func(s *big) *int { return &s.F287 },
	func(s *big) *int { return &s.F288 },
	func(s *big) *int { return &s.F289 },
	func(s *big) *int { return &s.F290 },
	func(s *big) *int { return &s.F291 },
	func(s *big) *int { return &s.F292 },
	func(s *big) *int { return &s.F293 },
	func(s *big) *int { return &s.F294 },
	func(s *big) *int { return &s.F295 },
	func(s *big) *int { return &s.F296 },
	func(s *big) *int { return &s.F297 },
	func(s *big) *int { return &s.F298 },
	func(s *big) *int { return &s.F299 },
}
